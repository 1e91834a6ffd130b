//go:build !linux

package store

func dropFromPageCache(string) bool { return false }

//go:build !linux

package vector

func dropFromPageCache(string) bool { return false }

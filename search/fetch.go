package search

import "errors"

// ErrBlockedAddress is returned (wrapped) when a download would connect to a
// loopback, private, link-local or unspecified address.
var ErrBlockedAddress = errors.New("refusing to connect to a private, loopback or link-local address")

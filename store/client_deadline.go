package store

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// callTimeout bounds one request to the owner. The owner answers reads at
// once and writes after a commit; an answer that takes this long means the
// owner is stopped (SIGSTOP, a debugger) or hung, and the caller deserves
// to be told which process that is rather than wait with it.
var callTimeout = 30 * time.Second

// helloTimeout bounds the hello exchange when dialling.
var helloTimeout = 5 * time.Second

// ErrNotAnswering is matched (errors.Is) by NotAnsweringError.
var ErrNotAnswering = errors.New("store: the owner of the data dir is not answering")

// NotAnsweringError says which process holds the data dir but does not
// answer. It matches ErrNotAnswering and ErrLocked (the store cannot be
// had: exit code 4), not ErrUnreachable: the owner is alive and holds the
// database, so taking it over is not possible.
type NotAnsweringError struct {
	PID    int // 0 when it cannot be told
	Waited time.Duration
}

func (e *NotAnsweringError) Error() string {
	who := "the researchtui that owns this data dir"
	if e.PID > 0 {
		who = fmt.Sprintf("the researchtui that owns this data dir (pid %d)", e.PID)
	}
	return fmt.Sprintf("store: %s did not answer within %s: it may be stopped (Ctrl-Z, SIGSTOP) or hung; continue it (kill -CONT) or end it", who, e.Waited)
}

func (e *NotAnsweringError) Is(target error) bool {
	return target == ErrNotAnswering || target == ErrLocked
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// exchange is one round trip on a working connection (c.mu is held): a
// connection left stalled by an earlier timeout is dialled afresh first,
// and a broken one (the owner exited) is dialled again once.
func (c *Client) exchange(req request) (response, error) {
	if c.stalled {
		if err := c.redial(); err != nil {
			return response{}, err
		}
	}
	resp, err := c.roundTrip(req)
	if err == nil {
		return resp, nil
	}
	if isTimeout(err) {
		return resp, c.stall()
	}
	gone := c.owner
	c.conn.Close()
	if derr := c.connect(); derr != nil {
		if errors.Is(derr, ErrNotAnswering) {
			c.stalled = true
			return resp, derr
		}
		return resp, fmt.Errorf("%w: the researchtui that owned this data dir (pid %d) went away (%v)", ErrUnreachable, gone, err)
	}
	err = c.reclaim()
	if err == nil {
		resp, err = c.roundTrip(req)
	}
	if err != nil {
		if isTimeout(err) {
			return resp, c.stall()
		}
		return resp, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	return resp, nil
}

// stall drops a connection whose answer did not come in time (it may come
// later and would be read as the next request's) and says who is silent.
func (c *Client) stall() error {
	c.conn.Close()
	c.stalled = true
	return &NotAnsweringError{PID: c.owner, Waited: callTimeout}
}

// redial replaces a stalled connection, claiming this process's sessions
// again on it.
func (c *Client) redial() error {
	gone := c.owner
	if err := c.connect(); err != nil {
		if errors.Is(err, ErrNotAnswering) {
			return err
		}
		return fmt.Errorf("%w: the researchtui that owned this data dir (pid %d) went away (%v)", ErrUnreachable, gone, err)
	}
	c.stalled = false
	if err := c.reclaim(); err != nil {
		if isTimeout(err) {
			return c.stall()
		}
		c.conn.Close()
		c.stalled = true
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	return nil
}

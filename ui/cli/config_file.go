package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/researchtui/researchtui/safefile"
)

// The config file is the person's, but it may be a shared dotfile, a
// link into a synced folder, or simply a mistake: it is read with bounds.
// TOML decoding (pelletier/go-toml v2.4) grows quadratically with the
// number of tables and keys: 40,000 empty tables take 8 s, 100,000 take
// 20 s. A real config holds a few dozen settings, so the file is capped at
// 64 KiB and 1,000 settings, where decoding is bounded (0.3 s at worst,
// measured on this project's 2-core machine).

const (
	maxConfigBytes    = 64 << 10
	maxConfigSettings = 1000
)

// readConfigFile returns the config file's bytes: fs.ErrNotExist when
// there is none, an error naming the problem when it is not a regular
// file (a FIFO would block, a device never end), too large, or has more
// settings than any config needs.
func readConfigFile(path string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: config file %s is not a regular file: %s", errUsage, path, safefile.Kind(info.Mode()))
	}
	if info.Size() > maxConfigBytes {
		return nil, fmt.Errorf("%w: config file %s is %d bytes; a config file is at most %d", errUsage, path, info.Size(), maxConfigBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxConfigBytes {
		return nil, fmt.Errorf("%w: config file %s grew past %d bytes while read", errUsage, path, maxConfigBytes)
	}
	if n := settingLines(raw); n > maxConfigSettings {
		return nil, fmt.Errorf("%w: config file %s has %d settings and tables; researchtui reads at most %d", errUsage, path, n, maxConfigSettings)
	}
	return raw, nil
}

// settingLines counts the lines that set a key or open a table: what the
// TOML decoder's cost grows with.
func settingLines(raw []byte) int {
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") || strings.Contains(l, "=") && !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return n
}

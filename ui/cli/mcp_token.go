package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// mcpToken is the HTTP bearer token: --token, else --token-file, else
// RESEARCHTUI_MCP_TOKEN; "" when none is given. A token given but empty or
// only whitespace is refused here: accepted, it would make every request
// fail with 401 and nobody the wiser.
func mcpToken(cmd *cobra.Command, flag, file string) (string, error) {
	blank := func(from string) error {
		return fmt.Errorf("%w: the bearer token from %s is empty or only whitespace; give a real one (e.g. openssl rand -hex 32)", errUsage, from)
	}
	if cmd.Flags().Changed("token") {
		if strings.TrimSpace(flag) == "" {
			return "", blank("--token")
		}
		return strings.TrimSpace(flag), nil
	}
	if file != "" {
		return tokenFromFile(file)
	}
	if v, ok := os.LookupEnv("RESEARCHTUI_MCP_TOKEN"); ok {
		if strings.TrimSpace(v) == "" {
			return "", blank("RESEARCHTUI_MCP_TOKEN")
		}
		return strings.TrimSpace(v), nil
	}
	return "", nil
}

// tokenFromFile reads a token file that only its owner may read: a token
// others can read is no secret.
func tokenFromFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%w: --token-file: %v", errUsage, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%w: --token-file %s can be read by others (mode %04o); chmod 600 it", errUsage, path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w: --token-file: %v", errUsage, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%w: --token-file %s is empty; put the token in it", errUsage, path)
	}
	return tok, nil
}

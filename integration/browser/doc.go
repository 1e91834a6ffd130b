// Package browser checks the HTML export in a real browser: Chromium from
// Debian's packages (scripts/install-chromium.sh), headless. Its tests are
// behind the build tag "integration":
//
//	go test -tags integration -count=1 ./integration/browser/
//
// CHROMIUM names the browser (default: chromium or chromium-browser on
// PATH); without one the tests fail, as CI installs it.
package browser

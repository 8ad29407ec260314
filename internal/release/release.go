// Package release names the release of the vouch module, reported as the
// service version by the router's /api/v1/about and the trust service's
// service_version.
package release

// Version is the release of the module. It changes with each tagged
// release.
const Version = "0.2.0"

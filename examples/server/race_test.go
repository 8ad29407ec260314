//go:build race

package main

// raceEnabled reports that the tests run under the race detector, so that
// the server binary they build is built with it too: its packages then come
// from the same build cache as the test binary's instead of being compiled
// a second time without instrumentation.
const raceEnabled = true

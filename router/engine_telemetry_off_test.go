package router

import (
	"context"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TestWithEngineTelemetry_off: the no-op providers switch the engine's
// hooks off (no telemetry at all), while the default keeps the global
// providers' hooks.
func TestWithEngineTelemetry_off(t *testing.T) {
	valid := WorkerFunc(func(context.Context, *Job) (*Result, error) {
		return &Result{Verdict: VerdictValid}, nil
	})
	sessions := []Session{{ID: 1, Worker: valid}}
	off, err := NewEngine(sessions, WithEngineTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	if off.tel != nil {
		t.Errorf("with the no-op providers the engine keeps telemetry %+v, want none", off.tel)
	}
	def, err := NewEngine(sessions)
	if err != nil {
		t.Fatal(err)
	}
	if def.tel == nil {
		t.Error("by default the engine has no telemetry, want the global providers'")
	}
}

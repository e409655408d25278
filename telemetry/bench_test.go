package telemetry_test

import (
	"context"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/telemetry"
	"github.com/agentmem/memory/tiers/tiered"
)

// BenchmarkWrapOverhead measures what Wrap adds to a call that itself
// costs next to nothing: unwrapped, with the default Telemetry (no
// providers: Wrap returns the memory), with explicit no-op providers, and
// with the SDK recording into memory.
func BenchmarkWrapOverhead(b *testing.B) {
	f := &fakeMemory{recollection: tiered.Recollection{Window: []memory.Record{{ID: "t"}}}}
	def, err := telemetry.New(telemetry.Options{})
	if err != nil {
		b.Fatal(err)
	}
	noop, err := telemetry.New(telemetry.Options{MeterProvider: metricnoop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider()})
	if err != nil {
		b.Fatal(err)
	}
	// The SDK, spans sampled but exported nowhere (the recorder would keep
	// them all), metrics aggregated for a reader.
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	sdk, err := telemetry.New(telemetry.Options{MeterProvider: mp, TracerProvider: sdktrace.NewTracerProvider()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		m    tiered.Interface
	}{
		{"unwrapped", f},
		{"default", telemetry.Wrap(f, def)},
		{"noop-providers", telemetry.Wrap(f, noop)},
		{"sdk", telemetry.Wrap(f, sdk)},
	} {
		b.Run(c.name+"/Forget", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.m.Forget(ctx, alice, memory.LevelSession)
			}
		})
		b.Run(c.name+"/RecallWith", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.m.RecallWith(ctx, alice, "q", tiered.RecallOptions{})
			}
		})
	}
}

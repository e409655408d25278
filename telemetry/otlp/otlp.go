// Package otlp exports the spans of package telemetry to an OpenTelemetry
// collector over OTLP/HTTP, with the official exporter (otlptracehttp).
//
//	tp, err := otlp.NewTraces(ctx, "http://collector:4318", "my-service")
//	if err != nil {
//		return err
//	}
//	defer tp.Shutdown(context.Background()) // exports the spans not sent yet
//	t, err := telemetry.New(telemetry.Options{TracerProvider: tp})
//
// It is a package of its own because the exporter links gRPC and
// Protocol Buffers code (several megabytes of a binary): a program that
// imports package telemetry without this one links none of it.
package otlp

import (
	"context"
	"errors"
	"net/url"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TracesPath is the path OTLP/HTTP receives spans at, which NewTraces
// appends to an endpoint without a path.
const TracesPath = "/v1/traces"

// NewTraces returns an SDK TracerProvider that exports its spans in
// batches to an OpenTelemetry collector over OTLP/HTTP, as protobuf
// unless OTEL_EXPORTER_OTLP_PROTOCOL says http/json, and whose resource names the service (service.name). Give it to
// telemetry.New as Options.TracerProvider, and shut it down when the
// program ends: Shutdown exports the spans not sent yet.
//
// endpoint is an http or https URL (TracesURL says which are refused).
// One without a path, or with the path "/", is a collector's base URL
// ("http://collector:4318") and the spans go to its TracesPath; one with
// another path is where the spans go, as it is
// ("http://collector:4318/v1/traces", the form of
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). An http URL is sent in the clear.
// The exporter's other settings — headers, timeout, compression,
// certificates, protocol — are read from the standard
// OTEL_EXPORTER_OTLP_* environment variables, as otlptracehttp reads
// them; its endpoint variables are not: endpoint is the one used.
//
// The resource is the SDK's default (the telemetry SDK's attributes and
// those of OTEL_RESOURCE_ATTRIBUTES) with service.name set to service,
// unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another.
// opts are applied after the options NewTraces sets: a sampler, say (by
// default every trace is sampled unless the caller's trace context says
// otherwise), or a resource, which replaces this one.
//
// NewTraces fails on an endpoint TracesURL refuses. It does not connect:
// a collector that cannot be reached is reported when a batch fails
// (through otel.Handle) and by Shutdown.
func NewTraces(ctx context.Context, endpoint, service string, opts ...sdktrace.TracerProviderOption) (*sdktrace.TracerProvider, error) {
	u, err := TracesURL(endpoint)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		return nil, err
	}
	if res, err = resource.Merge(res, resource.Environment()); err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
	if err != nil {
		return nil, err
	}
	base := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	return sdktrace.NewTracerProvider(append(base, slices.Clip(opts)...)...), nil
}

// TracesURL returns the URL NewTraces sends spans to for endpoint:
// endpoint with TracesPath as its path when it has none (or "/"),
// endpoint itself when it has one. It fails when endpoint is not an
// absolute http or https URL with a host, or has credentials, a query or
// a fragment; its error does not quote endpoint.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", errors.New("the OTLP endpoint is not a URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", errors.New("the OTLP endpoint is not an http or https URL of a host without credentials, query or fragment (http://collector:4318)")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path, u.RawPath = TracesPath, ""
	}
	return u.String(), nil
}

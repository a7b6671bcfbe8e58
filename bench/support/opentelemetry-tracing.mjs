// OpenTelemetry's HTTP auto-instrumentation as an application installs it: a NodeTracerProvider with a
// BatchSpanProcessor and HttpInstrumentation, exporting either over OTLP/HTTP protobuf with the
// project's own exporter, or (`devnull`) to an exporter that does the work a real one must do with
// every span, serialising it (JSON, OTLP's field set), and writes the result to /dev/null. Every
// export is counted, so the benchmarks can check that every request became a span and none was dropped.
import { closeSync, openSync, writeSync } from 'node:fs';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const EXPORT_SUCCESS = 0; // ExportResultCode.SUCCESS

class DevNullExporter {
  #fd = openSync('/dev/null', 'w');

  export(spans, done) {
    // Resource and scope once per batch, as OTLP groups them; every span in full.
    const first = spans[0];
    let out = JSON.stringify({ resource: first?.resource.attributes, scope: first?.instrumentationScope });
    for (const s of spans) {
      const { traceId, spanId } = s.spanContext();
      out += `\n${JSON.stringify({
        traceId,
        spanId,
        parentSpanId: s.parentSpanContext?.spanId,
        name: s.name,
        kind: s.kind,
        startTime: s.startTime,
        endTime: s.endTime,
        attributes: s.attributes,
        status: s.status,
        events: s.events,
        links: s.links,
      })}`;
    }
    writeSync(this.#fd, out);
    done({ code: EXPORT_SUCCESS });
  }

  forceFlush() {
    return Promise.resolve();
  }

  shutdown() {
    closeSync(this.#fd);
    return Promise.resolve();
  }
}

/** `exporter` with its spans counted: those it reported exported, and those it reported failed. */
function counted(exporter) {
  const counts = { exported: 0, failed: 0 };
  return {
    counts,
    export(spans, done) {
      exporter.export(spans, (result) => {
        if (result.code === EXPORT_SUCCESS) counts.exported += spans.length;
        else counts.failed += spans.length;
        done(result);
      });
    },
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
  };
}

/**
 * Installs tracing; call before the application requires `http`. `otlp`: export over OTLP/HTTP
 * protobuf to OTEL_EXPORTER_OTLP_ENDPOINT (the exporter's defaults otherwise: no compression) as
 * OTEL_SERVICE_NAME; else to /dev/null. `flush()` exports what is queued; `stop()` flushes and says
 * how many spans were exported, and how many an export failed for.
 */
/**
 * The batch processor's queue, in spans. Its default (2,048) drops the excess silently at the rates a
 * pipelined load reaches (374 of 12,382 spans in one 0.5 s slice): a cost comparison must export every span.
 */
const SPAN_QUEUE = 1 << 17;

export async function startOpenTelemetry({ otlp = false } = {}) {
  const exporter = counted(otlp ? new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter() : new DevNullExporter());
  // The SDK's default resource does not read OTEL_SERVICE_NAME (its environment detector is separate).
  const resource = process.env.OTEL_SERVICE_NAME ? resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }) : undefined;
  const provider = new NodeTracerProvider({ ...(resource ? { resource } : {}), spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: SPAN_QUEUE })] });
  provider.register();
  registerInstrumentations({ tracerProvider: provider, instrumentations: [new HttpInstrumentation()] });
  return {
    flush: () => provider.forceFlush(),
    async stop() {
      await provider.forceFlush();
      await provider.shutdown();
      return exporter.counts;
    },
  };
}

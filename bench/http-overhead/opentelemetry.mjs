// OpenTelemetry's HTTP auto-instrumentation as an application installs it: a NodeTracerProvider with a
// BatchSpanProcessor and HttpInstrumentation. Its exporter does the work a real one must do with every
// span, serialising it (JSON, OTLP's field set), and writes the result to /dev/null; it counts what
// it exported, so the benchmark can check that every request became a span and none was dropped.
import { closeSync, openSync, writeSync } from 'node:fs';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const EXPORT_SUCCESS = 0; // ExportResultCode.SUCCESS

class DevNullExporter {
  spans = 0;
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
    this.spans += spans.length;
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

/**
 * Installs tracing; call before the application requires `http`. `flush()` exports what is queued;
 * `stop()` flushes and says how many spans were exported in all.
 */
export function startOpenTelemetry() {
  const exporter = new DevNullExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  registerInstrumentations({ tracerProvider: provider, instrumentations: [new HttpInstrumentation()] });
  return {
    flush: () => provider.forceFlush(),
    async stop() {
      await provider.forceFlush();
      await provider.shutdown();
      return exporter.spans;
    },
  };
}

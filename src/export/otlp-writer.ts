import type { EventBatch } from '../format/trace-reader.js';
import { ExportOutput, FLUSH_BYTES } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { otlpRequestJson } from '../otlp/otlp-json.js';
import { writeOtlpRequest } from '../otlp/otlp-protobuf.js';
import { type OtlpBatch, type OtlpResource, otlpResource, OtlpSignals } from '../otlp/otlp-signals.js';
import { ProtobufWriter } from '../format/protobuf-writer.js';

/**
 * The field number of each request in an OTLP file: the file is a sequence of length-delimited
 * ExportTraceServiceRequest (1), ExportMetricsServiceRequest (2) and ExportLogsServiceRequest (3)
 * messages, each preceded by its tag, which makes the whole file one protobuf message (docs/CONVERT.md).
 */
export const OTLP_FILE_FIELDS = { traces: 1, metrics: 2, logs: 3 } as const;

/**
 * `convert --to otlp`: the trace as the OTLP export requests a live session sends (otlp-signals.ts),
 * in protobuf (tagged and length-delimited, above) or, with `json`, OTLP/JSON one request a line.
 */
export class OtlpWriter implements ExportWriter {
  private out: ExportOutput | undefined;
  private signals: OtlpSignals | undefined;
  private resource: OtlpResource | undefined;
  private readonly pb = new ProtobufWriter(FLUSH_BYTES + (64 << 10));
  private readonly text: string[] = [];
  private textBytes = 0;

  constructor(
    private readonly path: string,
    private readonly json: boolean,
  ) {}

  private request(batch: OtlpBatch): void {
    if (this.json) {
      const line = `${otlpRequestJson(batch, this.resource!)}\n`;
      this.text.push(line);
      this.textBytes += line.length;
    } else {
      this.pb.begin(OTLP_FILE_FIELDS[batch.signal]);
      writeOtlpRequest(this.pb, batch, this.resource!);
      this.pb.end();
    }
  }

  async write(batch: EventBatch): Promise<void> {
    if (!this.out) {
      this.out = await ExportOutput.create(this.path);
      // A file has no service to name: the resource says unknown_service:SCRIPT, as OpenTelemetry's SDKs do.
      this.resource = otlpResource(batch.header, {});
      this.signals = new OtlpSignals(batch.header, (b) => this.request(b));
    }
    for (const d of batch.drops) this.signals!.drop(d);
    for (const e of batch.events) this.signals!.event(e);
    if (this.pb.pos >= FLUSH_BYTES || this.textBytes >= FLUSH_BYTES) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.json) {
      await this.out!.write(Buffer.from(this.text.join('')));
      this.text.length = 0;
      this.textBytes = 0;
    } else {
      await this.out!.write(this.pb.buf.subarray(0, this.pb.pos));
      this.pb.clear();
    }
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    this.signals!.finish();
    await this.flush();
    await this.out!.close();
    return { path: this.path, files: 1, bytes: this.out!.bytes };
  }

  async abort(): Promise<void> {
    await this.out?.close();
  }
}

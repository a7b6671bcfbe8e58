// tracepipe's heap snapshot transcoder: V8's heap snapshot JSON, pushed as V8 serializes it, into the
// varint bulk payloads of Runtime.HeapSnapshot's events. The same state machine, byte for byte, as the
// JavaScript parser the inspector route runs (src/providers/heap-snapshot/snapshot-json-parser.ts and
// snapshot-sections.ts): both routes must write identical events, errors included. Plain C++, no V8:
// heap_snapshot.cc feeds it and hands its payloads to JavaScript in batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace tracepipe {

enum class Section : uint8_t { kNodes = 0, kEdges = 1, kLocations = 2, kStrings = 3 };

// How wide the records are, from the header's field lists (read by JavaScript: JSON.parse).
struct SnapshotLayout {
  int nodeWidth;
  int edgeWidth;
  int toNodeColumn;  // -1: none
  int locationWidth;
  int objectIndexColumn;  // -1: none
};

// Where the output goes. Each returns false to stop the transcoder (the sink failed or is not wanted).
class TranscoderSink {
 public:
  enum class HeaderResult { kOk, kInvalid, kStop };
  virtual ~TranscoderSink() = default;
  // The `snapshot` object's JSON text: fills `layout`, or says why the header is invalid (`error`).
  virtual HeaderResult Header(const std::string& json, SnapshotLayout* layout, std::string* error) = 0;
  // One bulk payload: `first` and `count` are records (bytes for strings); valid during the call only.
  virtual bool Payload(Section section, double first, double count, const uint8_t* bytes, size_t length) = 0;
};

class SnapshotTranscoder {
 public:
  // Payload bytes per bulk event, as snapshot-sections.ts's BULK_BYTES.
  static constexpr size_t kBulkBytes = 12 * 1024;
  // A record's field count is at most this (the header check says so too): bounds every payload.
  static constexpr int kMaxFields = 64;
  static constexpr size_t kMaxPayloadBytes = kBulkBytes + kMaxFields * 8;

  explicit SnapshotTranscoder(TranscoderSink* sink);

  // The next bytes of the JSON, cut anywhere. False once it failed or the sink stopped it.
  bool Push(const uint8_t* data, size_t length);
  // The document must be complete: sets the error when not.
  void Finish();

  bool failed() const { return mode_ == Mode::kFailed; }
  bool stopped() const { return stopped_; }
  bool done() const { return mode_ == Mode::kDone; }
  // Latin-1 bytes, as the JavaScript parser's messages (String.fromCharCode of each byte).
  const std::string& error() const { return error_; }

  double nodes() const { return nodes_.records; }
  double edges() const { return edges_.records; }
  double locations() const { return locations_.records; }
  double strings() const { return strings_.count; }
  double stringBytes() const { return strings_.sent + static_cast<double>(strings_.outLen); }
  double skippedValues() const { return skipped_; }

 private:
  enum class Mode {
    kStart,
    kExpectKey,
    kKey,
    kExpectColon,
    kCapture,
    kSkip,
    kExpectArray,
    kNumbers,
    kStringsBetween,
    kStringChars,
    kStringEscape,
    kStringHex,
    kDone,
    kFailed,
  };

  struct NumberSection {
    const char* name;
    Section section;
    bool ready = false;
    int width = 0;
    int offsetColumn = -1;
    uint64_t nodeWidth = 1;
    uint8_t buf[kMaxPayloadBytes];
    size_t pos = 0;
    int column = 0;
    double value = 0;
    bool inNumber = false;
    double records = 0;
    double staged = 0;
    bool closed = false;
  };

  struct StringSection {
    std::vector<uint8_t> cur;
    uint32_t high = 0;
    uint8_t out[kBulkBytes];
    size_t outLen = 0;
    double sent = 0;
    double count = 0;
  };

  void Fail(const std::string& message);
  void Step(uint8_t c);
  void Escape(uint8_t c);
  void StartValue();
  void Generic(uint8_t c);
  void EndGeneric();
  size_t NumbersRun(const uint8_t* chunk, size_t i, size_t n);
  size_t StringRun(const uint8_t* chunk, size_t i, size_t n);

  void Configure(NumberSection& s, int width, int offsetColumn, int nodeWidth);
  size_t Scan(NumberSection& s, const uint8_t* chunk, size_t i, size_t n);
  bool SendNumbers(NumberSection& s);
  void CloseNumbers(NumberSection& s);

  bool Raw(const uint8_t* bytes, size_t length);
  bool Unit(uint32_t c);
  bool FlushHigh();
  bool CodePoint(uint32_t c);
  bool EndString();
  void StringBytes(const uint8_t* bytes, size_t length);
  void SendStrings();

  void Stop();

  TranscoderSink* sink_;
  Mode mode_ = Mode::kStart;
  bool stopped_ = false;
  std::string error_;
  std::string key_;
  int depth_ = 0;
  bool inString_ = false;
  bool escaped_ = false;
  bool inNumber_ = false;
  std::vector<uint8_t> captured_;
  uint32_t hex_ = 0;
  int hexDigits_ = 0;
  NumberSection* numbers_ = nullptr;
  NumberSection nodes_;
  NumberSection edges_;
  NumberSection locations_;
  StringSection strings_;
  double skipped_ = 0;
  std::set<std::string> seen_;
};

}  // namespace tracepipe

// The heap snapshot transcoder (snapshot_transcoder.h): the JavaScript parser's state machine, in C++.
// Every limit and message matches snapshot-json-parser.ts / snapshot-sections.ts, and the tests hold
// both to the same events and errors on the same input, cut anywhere.

#include "snapshot_transcoder.h"

#include <algorithm>
#include <cstring>

namespace tracepipe {

namespace {

// Numbers are exact below 2^53 (a JavaScript Number); the first digit that reaches it is an error.
constexpr uint64_t kNumberLimit = uint64_t{1} << 53;
// As MAX_HEADER_BYTES, MAX_KEYS and MAX_STRING_BYTES in snapshot-json-parser.ts and snapshot-sections.ts.
constexpr size_t kMaxHeaderBytes = 1024 * 1024;
constexpr size_t kMaxKeys = 256;
constexpr size_t kMaxStringBytes = 64 * 1024 * 1024;

bool IsSpace(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

int HexValue(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

size_t WriteVarint(uint8_t* buf, size_t pos, uint64_t v) {
  while (v > 127) {
    buf[pos++] = static_cast<uint8_t>((v & 127) | 128);
    v >>= 7;
  }
  buf[pos++] = static_cast<uint8_t>(v);
  return pos;
}

std::string Char(uint8_t c) { return std::string(1, static_cast<char>(c)); }

}  // namespace

SnapshotTranscoder::SnapshotTranscoder(TranscoderSink* sink) : sink_(sink) {
  nodes_.name = "nodes";
  nodes_.section = Section::kNodes;
  edges_.name = "edges";
  edges_.section = Section::kEdges;
  locations_.name = "locations";
  locations_.section = Section::kLocations;
  strings_.cur.reserve(1024);
}

void SnapshotTranscoder::Fail(const std::string& message) {
  if (error_.empty()) error_ = message;
  mode_ = Mode::kFailed;
}

void SnapshotTranscoder::Stop() { stopped_ = true; }

bool SnapshotTranscoder::Push(const uint8_t* chunk, size_t n) {
  size_t i = 0;
  while (i < n && !stopped_) {
    switch (mode_) {
      case Mode::kNumbers:
        i = NumbersRun(chunk, i, n);
        break;
      case Mode::kStringChars:
        i = StringRun(chunk, i, n);
        break;
      case Mode::kFailed:
        return false;
      default:
        Step(chunk[i++]);
    }
  }
  return !stopped_ && mode_ != Mode::kFailed;
}

size_t SnapshotTranscoder::NumbersRun(const uint8_t* chunk, size_t i, size_t n) {
  NumberSection& s = *numbers_;
  i = Scan(s, chunk, i, n);
  if (mode_ == Mode::kFailed || stopped_) return n;
  if (s.closed) mode_ = Mode::kExpectKey;
  return i;
}

size_t SnapshotTranscoder::StringRun(const uint8_t* chunk, size_t i, size_t n) {
  const size_t start = i;
  while (i < n && chunk[i] != '"' && chunk[i] != '\\') i++;
  if (!Raw(chunk + start, i - start)) return n;
  if (i == n) return n;
  if (chunk[i] == '"') {
    if (!EndString()) return n;
    mode_ = Mode::kStringsBetween;
  } else {
    mode_ = Mode::kStringEscape;
  }
  return i + 1;
}

void SnapshotTranscoder::Step(uint8_t c) {
  switch (mode_) {
    case Mode::kDone:
      if (!IsSpace(c)) Fail("data after the end of the snapshot JSON");
      return;
    case Mode::kStart:
      if (IsSpace(c)) return;
      if (c != '{') return Fail("the snapshot is not a JSON object");
      mode_ = Mode::kExpectKey;
      return;
    case Mode::kExpectKey:
      if (IsSpace(c) || c == ',') return;
      if (c == '}') {
        mode_ = Mode::kDone;
        return;
      }
      if (c != '"') return Fail("unexpected '" + Char(c) + "' where a key belongs");
      key_.clear();
      mode_ = Mode::kKey;
      return;
    case Mode::kKey:
      if (c == '"') {
        mode_ = Mode::kExpectColon;
        return;
      }
      if (c == '\\' || key_.size() > 64) return Fail("unexpected top-level key");
      key_.push_back(static_cast<char>(c));
      return;
    case Mode::kExpectColon:
      if (IsSpace(c)) return;
      if (c != ':') return Fail("expected ':' after \"" + key_ + "\"");
      return StartValue();
    case Mode::kCapture:
    case Mode::kSkip:
      return Generic(c);
    case Mode::kExpectArray:
      if (IsSpace(c)) return;
      if (c != '[') return Fail("\"" + key_ + "\" is not an array");
      mode_ = key_ == "strings" ? Mode::kStringsBetween : Mode::kNumbers;
      return;
    case Mode::kStringsBetween:
      if (IsSpace(c) || c == ',') return;
      if (c == '"') {
        mode_ = Mode::kStringChars;
        return;
      }
      if (c == ']') {
        SendStrings();
        mode_ = Mode::kExpectKey;
        return;
      }
      return Fail("the strings section holds something other than strings");
    case Mode::kStringEscape:
      return Escape(c);
    case Mode::kStringHex: {
      const int h = HexValue(c);
      if (h < 0) return Fail("bad \\u escape in a string");
      hex_ = hex_ * 16 + static_cast<uint32_t>(h);
      if (++hexDigits_ == 4) {
        if (!Unit(hex_)) return;
        mode_ = Mode::kStringChars;
      }
      return;
    }
    case Mode::kNumbers:
    case Mode::kStringChars:
    case Mode::kFailed:
      return;
  }
}

void SnapshotTranscoder::Escape(uint8_t c) {
  uint32_t unit;
  switch (c) {
    case 'n': unit = 10; break;
    case 't': unit = 9; break;
    case 'r': unit = 13; break;
    case 'b': unit = 8; break;
    case 'f': unit = 12; break;
    case 'u':
      hex_ = 0;
      hexDigits_ = 0;
      mode_ = Mode::kStringHex;
      return;
    case '"':
    case '\\':
    case '/':
      unit = c;
      break;
    default:
      return Fail("bad escape '\\" + Char(c) + "' in a string");
  }
  if (!Unit(unit)) return;
  mode_ = Mode::kStringChars;
}

void SnapshotTranscoder::StartValue() {
  if (seen_.count(key_) != 0) return Fail("\"" + key_ + "\" appears twice");
  if (seen_.size() >= kMaxKeys) return Fail("the snapshot has more than 256 top-level keys");
  seen_.insert(key_);
  depth_ = 0;
  inString_ = false;
  escaped_ = false;
  inNumber_ = false;
  if (key_ == "snapshot") {
    captured_.clear();
    mode_ = Mode::kCapture;
    return;
  }
  NumberSection* section = key_ == "nodes" ? &nodes_ : key_ == "edges" ? &edges_ : key_ == "locations" ? &locations_ : nullptr;
  if (section != nullptr) {
    if (!section->ready) return Fail("\"" + key_ + "\" comes before the snapshot header that describes it");
    numbers_ = section;
    mode_ = Mode::kExpectArray;
    return;
  }
  mode_ = key_ == "strings" ? Mode::kExpectArray : Mode::kSkip;
}

// Any JSON value, byte by byte: captured (the header) or skipped (sections not carried, their numbers
// counted). Ends after the closing bracket that returns to depth 0.
void SnapshotTranscoder::Generic(uint8_t c) {
  const bool capture = mode_ == Mode::kCapture;
  if (capture && captured_.size() >= kMaxHeaderBytes) return Fail("the snapshot header is longer than 1 MiB");
  if (inString_) {
    if (capture) captured_.push_back(c);
    if (escaped_) escaped_ = false;
    else if (c == '\\') escaped_ = true;
    else if (c == '"') inString_ = false;
    return;
  }
  if (depth_ == 0 && (c == ',' || c == '}')) {
    // A scalar value ended; its comma (or the document's closing brace) follows it.
    if (capture) return Fail("\"" + key_ + "\" is not an object");
    mode_ = c == ',' ? Mode::kExpectKey : Mode::kDone;
    return;
  }
  if (capture) captured_.push_back(c);
  const bool digit = c >= '0' && c <= '9';
  if (digit && !inNumber_ && !capture) skipped_++;
  inNumber_ = digit || (inNumber_ && (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'));
  if (c == '"') {
    inString_ = true;
  } else if (c == '{' || c == '[') {
    depth_++;
  } else if (c == '}' || c == ']') {
    if (--depth_ < 0) return Fail("unbalanced \"" + key_ + "\"");
    if (depth_ == 0) EndGeneric();
  }
}

void SnapshotTranscoder::EndGeneric() {
  const bool wasCapture = mode_ == Mode::kCapture;
  mode_ = Mode::kExpectKey;
  if (!wasCapture) return;
  const std::string json(captured_.begin(), captured_.end());
  captured_.clear();
  captured_.shrink_to_fit();
  SnapshotLayout layout{};
  std::string error;
  switch (sink_->Header(json, &layout, &error)) {
    case TranscoderSink::HeaderResult::kInvalid:
      return Fail(error);
    case TranscoderSink::HeaderResult::kStop:
      return Stop();
    case TranscoderSink::HeaderResult::kOk:
      break;
  }
  const int w = layout.nodeWidth;
  const bool columnsFit = layout.toNodeColumn < layout.edgeWidth && layout.objectIndexColumn < layout.locationWidth && layout.toNodeColumn >= -1 && layout.objectIndexColumn >= -1;
  const auto fits = [](int width) { return width > 0 && width <= kMaxFields; };
  if (!fits(w) || !fits(layout.edgeWidth) || !fits(layout.locationWidth) || !columnsFit) return Fail("the snapshot header lacks its field lists or counts");
  Configure(nodes_, w, -1, w);
  Configure(edges_, layout.edgeWidth, layout.toNodeColumn, w);
  Configure(locations_, layout.locationWidth, layout.objectIndexColumn, w);
}

void SnapshotTranscoder::Configure(NumberSection& s, int width, int offsetColumn, int nodeWidth) {
  s.ready = true;
  s.width = width;
  s.offsetColumn = offsetColumn;
  s.nodeWidth = static_cast<uint64_t>(nodeWidth);
}

// The hot loop, as NumberSection.scan: the array's digits, commas and newlines from chunk[i] until the
// chunk ends, the array closes or a byte does not belong; returns the index after the last byte read.
size_t SnapshotTranscoder::Scan(NumberSection& s, const uint8_t* chunk, size_t i, size_t n) {
  uint8_t* const buf = s.buf;
  const int width = s.width;
  const int offsetColumn = s.offsetColumn;
  uint64_t v = static_cast<uint64_t>(s.value);
  bool inNumber = s.inNumber;
  size_t pos = s.pos;
  int column = s.column;
  for (; i < n; i++) {
    uint8_t c = chunk[i];
    uint64_t digit = static_cast<uint64_t>(c) - '0';
    if (digit < 10) {
      // Below 2^53 before, so no overflow here; clamped at the limit, which is an error anyway.
      v = std::min(v * 10 + digit, kNumberLimit);
      inNumber = true;
      while (++i < n && (digit = static_cast<uint64_t>(chunk[i]) - '0') < 10) v = std::min(v * 10 + digit, kNumberLimit);
      if (i == n) break;
      c = chunk[i];
    }
    if (inNumber) {
      if (v >= kNumberLimit) {
        Fail(std::string(s.name) + " record " + std::to_string(static_cast<uint64_t>(s.records)) + " holds a number past 2^53 - 1");
        break;
      }
      if (column == offsetColumn) {
        if (v % s.nodeWidth != 0) {
          Fail(std::string(s.name) + " record " + std::to_string(static_cast<uint64_t>(s.records)) + " points at node offset " + std::to_string(v) + ", not a multiple of the node width " + std::to_string(s.nodeWidth));
          break;
        }
        v /= s.nodeWidth;
      }
      if (v < 128) buf[pos++] = static_cast<uint8_t>(v);
      else pos = WriteVarint(buf, pos, v);
      v = 0;
      inNumber = false;
      if (++column == width) {
        column = 0;
        s.records++;
        if (pos >= kBulkBytes) {
          s.pos = pos;
          if (!SendNumbers(s)) break;
          pos = 0;
        }
      }
    }
    if (c == ',' || c == '\n') continue;
    if (c == ']') {
      s.pos = pos;
      s.column = column;
      CloseNumbers(s);
      return i + 1;
    }
    if (c == ' ' || c == '\r' || c == '\t') continue;
    Fail("unexpected '" + Char(c) + "' in the " + s.name + " section (only whole non-negative numbers belong there)");
    break;
  }
  s.value = static_cast<double>(v);
  s.inNumber = inNumber;
  s.pos = pos;
  s.column = column;
  return i;
}

bool SnapshotTranscoder::SendNumbers(NumberSection& s) {
  if (s.records == s.staged) return true;
  const bool more = sink_->Payload(s.section, s.staged, s.records - s.staged, s.buf, s.pos);
  s.staged = s.records;
  s.pos = 0;
  if (!more) Stop();
  return more;
}

void SnapshotTranscoder::CloseNumbers(NumberSection& s) {
  s.closed = true;
  if (s.column != 0) Fail(std::string("the ") + s.name + " section ends in the middle of a record");
  else SendNumbers(s);
}

// The strings section, as StringSection: each string's UTF-8 (raw bytes as they are, escapes as UTF-16
// units, surrogate pairs joined, a lone one U+FFFD), then a varint byte length and those bytes into
// one stream cut into payloads of exactly kBulkBytes.

bool SnapshotTranscoder::Raw(const uint8_t* bytes, size_t length) {
  if (length == 0) return true;
  if (!FlushHigh()) return false;
  if (strings_.cur.size() + length > kMaxStringBytes) {
    Fail("a string in the strings section is longer than 64 MiB");
    return false;
  }
  strings_.cur.insert(strings_.cur.end(), bytes, bytes + length);
  return true;
}

bool SnapshotTranscoder::Unit(uint32_t c) {
  if (strings_.high != 0) {
    const uint32_t h = strings_.high;
    strings_.high = 0;
    if (c >= 0xdc00 && c <= 0xdfff) return CodePoint(0x10000 + ((h - 0xd800) << 10) + (c - 0xdc00));
    if (!CodePoint(0xfffd)) return false;
  }
  if (c >= 0xd800 && c <= 0xdbff) {
    strings_.high = c;
    return true;
  }
  if (c >= 0xdc00 && c <= 0xdfff) return CodePoint(0xfffd);
  return CodePoint(c);
}

bool SnapshotTranscoder::FlushHigh() {
  if (strings_.high == 0) return true;
  strings_.high = 0;
  return CodePoint(0xfffd);
}

bool SnapshotTranscoder::CodePoint(uint32_t c) {
  if (strings_.cur.size() + 4 > kMaxStringBytes) {
    Fail("a string in the strings section is longer than 64 MiB");
    return false;
  }
  std::vector<uint8_t>& b = strings_.cur;
  if (c < 0x80) {
    b.push_back(static_cast<uint8_t>(c));
  } else if (c < 0x800) {
    b.push_back(static_cast<uint8_t>(0xc0 | (c >> 6)));
    b.push_back(static_cast<uint8_t>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    b.push_back(static_cast<uint8_t>(0xe0 | (c >> 12)));
    b.push_back(static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3f)));
    b.push_back(static_cast<uint8_t>(0x80 | (c & 0x3f)));
  } else {
    b.push_back(static_cast<uint8_t>(0xf0 | (c >> 18)));
    b.push_back(static_cast<uint8_t>(0x80 | ((c >> 12) & 0x3f)));
    b.push_back(static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3f)));
    b.push_back(static_cast<uint8_t>(0x80 | (c & 0x3f)));
  }
  return true;
}

bool SnapshotTranscoder::EndString() {
  if (!FlushHigh()) return false;
  uint8_t head[10];
  const size_t headLength = WriteVarint(head, 0, strings_.cur.size());
  StringBytes(head, headLength);
  if (!stopped_) StringBytes(strings_.cur.data(), strings_.cur.size());
  strings_.cur.clear();
  strings_.count++;
  return !stopped_;
}

void SnapshotTranscoder::StringBytes(const uint8_t* bytes, size_t length) {
  while (length > 0 && !stopped_) {
    const size_t take = std::min(length, kBulkBytes - strings_.outLen);
    std::memcpy(strings_.out + strings_.outLen, bytes, take);
    strings_.outLen += take;
    bytes += take;
    length -= take;
    if (strings_.outLen == kBulkBytes) SendStrings();
  }
}

void SnapshotTranscoder::SendStrings() {
  if (strings_.outLen == 0) return;
  const double length = static_cast<double>(strings_.outLen);
  const bool more = sink_->Payload(Section::kStrings, strings_.sent, length, strings_.out, strings_.outLen);
  strings_.sent += length;
  strings_.outLen = 0;
  if (!more) Stop();
}

void SnapshotTranscoder::Finish() {
  if (mode_ == Mode::kFailed) return;
  if (mode_ != Mode::kDone) return Fail("the snapshot JSON ended early");
  if (!nodes_.ready) Fail("the snapshot has no header");
}

}  // namespace tracepipe

import BLIPCore
import Capture
import Replication

/// One log line being written as UTF-8 bytes: `time key=value …` (text; a value with a space, a
/// quote or `=` is quoted, its quotes escaped) or one JSON object. The relay logs every message
/// on its event loops, so nothing here makes a string per field: keys are static strings, values
/// and numbers are copied or written straight into one buffer, and the line becomes a `String`
/// once, in ``finish()``.
///
/// Noncopyable: it owns its buffer while it is open, borrowed from the thread's ``LineScratch``
/// and given back when it goes away (after ``finish()``), so a thread reuses one buffer. Limit:
/// make and finish a line within one synchronous call (never across a suspension point).
///
/// UTF-8: keys, static strings, `String` values and numbers are valid UTF-8 as written, and so is
/// what quoting and escaping make of them, and text written in by a lender (``text(_:from:writtenBy:)``) is valid as
/// lent; raw bytes (``raw(_:_:redacted:)``, properties as received) may not be. Those are
/// validated as they go in when they have a byte that is not ASCII, and ``finish()`` repairs the
/// line (invalid sequences become U+FFFD) only when one was invalid.
struct LineBuilder: ~Copyable {
    var base: UnsafeMutablePointer<UInt8>
    var count = 0
    var capacity: Int
    let json: Bool
    /// The thread's scratch, held by its thread-specific slot (not retained here: a line lives
    /// within one call on that thread).
    let scratch: Unmanaged<LineScratch>
    /// Set once raw bytes with a byte ≥ 0x80 went in: the line then needs validating.
    var unvalidated = false

    /// Room for a message line without a body; a longer line grows the buffer.
    static let initialCapacity = 256

    /// `time`: the line's timestamp (nil: now).
    init(json: Bool, event: StaticString?, time: CaptureTimestamp? = nil) {
        self.json = json
        scratch = LineScratch.currentUnretained
        if let kept = scratch._withUnsafeGuaranteedRef({ $0.takeBuffer() }) {
            (base, capacity) = kept
        } else {
            capacity = Self.initialCapacity
            base = .allocate(capacity: capacity)
        }
        if json { append("{\"time\":\"") }
        reserve(LogTimestamp.length)
        if let time {
            let out = base + count
            scratch._withUnsafeGuaranteedRef { $0.writeTimestamp(seconds: Int(time.seconds), microseconds: Int(time.nanoseconds / 1000), to: out) }
        } else {
            let out = base + count
            scratch._withUnsafeGuaranteedRef { $0.writeTimestamp(to: out) }
        }
        count += LogTimestamp.length
        if json {
            append("\"")
            if let event { word("event", event) }
        }
    }

    deinit {
        let (base, capacity) = (base, capacity)
        scratch._withUnsafeGuaranteedRef { $0.giveBack(base, capacity: capacity) }
    }

    consuming func finish() -> String {
        if json { byte(0x7D) }
        return makeString(UnsafeBufferPointer(start: base, count: count))
    }

    /// Ends the line with a newline and hands its bytes to `sink`: no `String` is made unless raw
    /// bytes that are not ASCII need checking (then the repaired line is written).
    consuming func finish(to sink: some LogLineSink) {
        reserve(2)
        if json { put(0x7D) }
        put(0x0A)
        guard unvalidated else { return sink.write(lines: UnsafeRawBufferPointer(start: base, count: count)) }
        var line = String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
        line.withUTF8 { sink.write(lines: UnsafeRawBufferPointer($0)) }
    }

    func makeString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard !unvalidated, #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) else {
            // Raw bytes that are not ASCII may not be UTF-8: invalid sequences become U+FFFD.
            return String(decoding: bytes, as: UTF8.self)
        }
        // Valid UTF-8 by construction (see the type's notes): copied without a validating pass.
        return String(copying: UTF8Span(unchecked: bytes.span))
    }

    // MARK: fields

    mutating func text(_ key: StaticString, _ value: String) {
        beginField(key)
        let copied: Void? = value.utf8.withContiguousStorageIfAvailable { quoted(UnsafeRawBufferPointer($0)) }
        if copied == nil {
            var value = value
            value.withUTF8 { quoted(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Room a lender gets in the line for ``text(_:from:writtenBy:)`` before the line grows to what
    /// it asked for.
    static let lentRoom = 192

    /// A text value written straight into the line by `write`, which writes what fits of it into
    /// the memory it is given and returns its whole length (``ReplicationMessage/writeSummary(into:)``):
    /// then quoted or escaped as ``text(_:_:)`` would a string (valid UTF-8, as the lender
    /// promises: not checked again in release builds).
    /// Saves lending the bytes from a buffer of the lender's and copying them in.
    /// `lender` goes to `write` as an argument: a closure that captured it instead would copy it.
    mutating func text<Lender: ~Copyable>(_ key: StaticString, from lender: borrowing Lender,
                                          writtenBy write: (borrowing Lender, UnsafeMutableBufferPointer<UInt8>) -> Int) {
        beginField(key)
        reserve(Self.lentRoom + 2)
        // One byte left in front for an opening quote, one behind for the closing one.
        let start = count + 1
        var length = write(lender, UnsafeMutableBufferPointer(start: base + start, count: capacity - start - 1))
        if start + length + 1 > capacity {
            grow(length + 2)
            length = write(lender, UnsafeMutableBufferPointer(start: base + start, count: capacity - start - 1))
        }
        let value = UnsafeRawBufferPointer(start: base + start, count: length)
        assert(Self.isValidUTF8(value), "lent text is valid UTF-8")
        let plain: Bool, quotes: Bool
        if json {
            plain = !Self.needsJSONEscape(value)
            quotes = true
        } else {
            let seen = Self.textClass(of: value)
            plain = seen & (Self.isQuote | Self.isControl) == 0
            quotes = seen & Self.needsQuotes != 0
        }
        guard plain else {
            // A quote or a control character: escaped from a copy (the value is where it goes).
            let copy = Array(value)
            return copy.withUnsafeBytes { quoted($0) }
        }
        if quotes {
            base[count] = 0x22
            count = start + length
            put(0x22)
        } else {
            // One byte to the left, over the quote's room: the regions overlap.
            UnsafeMutableRawPointer(base + count).copyMemory(from: base + start, byteCount: length)
            count += length
        }
    }

    /// A word the relay itself names (`C→U`, `MSG`, `relay`): written as it is, quoted only in
    /// JSON, without looking for what to quote or escape (it has no space, quote, `=`, backslash
    /// or control character).
    mutating func word(_ key: StaticString, _ value: StaticString) {
        let length = value.utf8CodeUnitCount
        assert(!UnsafeRawBufferPointer(start: value.utf8Start, count: length).contains {
            $0 <= 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x5C || $0 == 0x7F
        }, "a word needs no quoting")
        beginField(key)
        reserve(length + 2)
        if json { put(0x22) }
        putShort(UnsafeRawPointer(value.utf8Start), length)
        if json { put(0x22) }
    }

    /// `dir` and `type`, as two ``word(_:_:)`` calls write them, in one copy: a message line's
    /// fixed middle, written for every message (an ACK type, never on a message line, takes the
    /// two calls).
    mutating func directionAndType(_ direction: BLIPDirection, _ type: MessageType) {
        let fields: StaticString
        switch (json, direction, type) {
        case (false, .clientToServer, .request): fields = " dir=C→U type=MSG"
        case (false, .clientToServer, .response): fields = " dir=C→U type=RPY"
        case (false, .clientToServer, .error): fields = " dir=C→U type=ERR"
        case (false, .serverToClient, .request): fields = " dir=U→C type=MSG"
        case (false, .serverToClient, .response): fields = " dir=U→C type=RPY"
        case (false, .serverToClient, .error): fields = " dir=U→C type=ERR"
        case (true, .clientToServer, .request): fields = #","dir":"C→U","type":"MSG""#
        case (true, .clientToServer, .response): fields = #","dir":"C→U","type":"RPY""#
        case (true, .clientToServer, .error): fields = #","dir":"C→U","type":"ERR""#
        case (true, .serverToClient, .request): fields = #","dir":"U→C","type":"MSG""#
        case (true, .serverToClient, .response): fields = #","dir":"U→C","type":"RPY""#
        case (true, .serverToClient, .error): fields = #","dir":"U→C","type":"ERR""#
        default:
            word("dir", direction.staticArrow)
            return word("type", type.staticDescription)
        }
        let length = fields.utf8CodeUnitCount
        reserve(length)
        put(UnsafeRawBufferPointer(start: fields.utf8Start, count: length))
    }

    /// A value given as raw bytes (a property); `redacted` writes `<redacted>` instead.
    mutating func raw(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, redacted: Bool = false) {
        noteRaw(key)
        beginField(key)
        if redacted {
            Self.redactedMark.withUTF8Buffer { quoted(UnsafeRawBufferPointer($0)) }
        } else {
            noteRaw(value)
            quoted(value)
        }
    }

    mutating func raw(_ key: StaticString, _ value: UnsafeRawBufferPointer) {
        noteRaw(value)
        beginField(key)
        quoted(value)
    }

    /// Checks raw bytes that are not all ASCII right away (a value is short; the line may not
    /// be), and notes an invalid one: ``finish()`` then repairs the whole line.
    mutating func noteRaw(_ bytes: UnsafeRawBufferPointer) {
        guard !unvalidated else { return }
        var any: UInt8 = 0
        for byte in bytes { any |= byte }
        if any >= 0x80, !Self.isValidUTF8(bytes) { unvalidated = true }
    }

    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) else { return false }
        return bytes.withMemoryRebound(to: UInt8.self) { bytes in
            do {
                _ = try UTF8Span(validating: bytes.span)
                return true
            } catch {
                return false
            }
        }
    }

    mutating func int(_ key: StaticString, _ value: Int) {
        beginField(key)
        appendDecimal(value)
    }

    /// Nanoseconds shown as milliseconds with three decimals.
    mutating func millis(_ key: StaticString, _ nanoseconds: Int64) {
        beginField(key)
        let micros = Int(nanoseconds / 1000)
        appendDecimal(micros / 1000)
        byte(0x2E)
        let fraction = micros % 1000
        if fraction < 100 { byte(0x30) }
        if fraction < 10 { byte(0x30) }
        appendDecimal(fraction)
    }

    /// Message flags as letters (`Z` compressed, `U` urgent, `N` no-reply, `M` more coming; `-` for none).
    mutating func flags(_ flags: FrameFlags) {
        beginField("flags")
        reserve(6)
        let start = count
        if json { put(0x22) }
        if flags.isCompressed { put(0x5A) }
        if flags.isUrgent { put(0x55) }
        if flags.isNoReply { put(0x4E) }
        if flags.hasMoreComing { put(0x4D) }
        if count == start + (json ? 1 : 0) { put(0x2D) }
        if json { put(0x22) }
    }

    /// Text lines leave a missing value out; JSON writes `null`.
    mutating func null(_ key: StaticString) {
        guard json else { return }
        beginField(key)
        append("null")
    }
}

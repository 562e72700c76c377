import BLIPCore
import NIOCore

extension CaptureRecord {
    /// Appends the record, framed (length, version, kind, body, CRC), to `buffer`. Returns the
    /// number of bytes appended.
    @discardableResult
    public func encode(into buffer: inout ByteBuffer) -> Int {
        let start = buffer.writerIndex
        buffer.writeInteger(UInt32(0), endianness: .little)
        buffer.writeInteger(CaptureFileFormat.recordVersion)
        buffer.writeInteger(kind.rawValue)
        encodeBody(into: &buffer)
        let length = buffer.writerIndex - start - 4
        buffer.setInteger(UInt32(length), at: start, endianness: .little)
        var checksum = RunningChecksum()
        buffer.withUnsafeReadableBytes { bytes in
            let from = start + 4 - buffer.readerIndex
            checksum.update(UnsafeRawBufferPointer(rebasing: bytes[from..<(from + length)]))
        }
        buffer.writeInteger(checksum.value, endianness: .little)
        return buffer.writerIndex - start
    }

    private func encodeBody(into buffer: inout ByteBuffer) {
        buffer.writeCaptureTime(time)
        switch self {
        case .handshake(let record):
            buffer.writeCaptureVarint(record.sessionID)
            buffer.writeCaptureString(record.clientAddress)
            buffer.writeCaptureString(record.requestLine)
            buffer.writeCaptureHeaders(record.requestHeaders)
            buffer.writeCaptureString(record.upstreamURL)
            buffer.writeCaptureVarint(UInt64(max(0, record.responseStatus)))
            buffer.writeCaptureString(record.responseReason)
            buffer.writeCaptureHeaders(record.responseHeaders)
            buffer.writeInteger(UInt8(record.subprotocol == nil ? 0 : 1))
            if let subprotocol = record.subprotocol { buffer.writeCaptureString(subprotocol) }
        case .frame(let record):
            buffer.writeInteger(UInt8(record.direction.rawValue))
            buffer.writeInteger(record.leg.rawValue)
            buffer.writeCaptureVarint(UInt64(record.bytes.readableBytes))
            buffer.writeImmutableBuffer(record.bytes)
        case .messageHead(let record):
            buffer.writeInteger(UInt8(record.direction.rawValue))
            buffer.writeCaptureVarint(record.number)
            buffer.writeInteger(record.flags.rawValue)
            record.properties.encode(into: &buffer)
        case .verdict(let record):
            buffer.writeInteger(UInt8(record.direction.rawValue))
            buffer.writeCaptureVarint(record.number)
            buffer.writeCaptureString(record.action)
            buffer.writeCaptureString(record.reason)
        case .dropped(let record):
            buffer.writeCaptureVarint(record.count)
            buffer.writeCaptureString(record.reason)
        case .close(let record):
            buffer.writeInteger(record.side.rawValue)
            buffer.writeCaptureVarint(record.code.map { UInt64($0) + 1 } ?? 0)
            buffer.writeCaptureString(record.reason)
        case .note(_, let text):
            buffer.writeCaptureString(text)
        }
    }

    /// Decodes a body of the current record version. `offset` names the record in errors.
    static func decode(kind: Kind, body: ByteBuffer, offset: Int64) throws -> CaptureRecord {
        var reader = RecordBodyReader(buffer: body, offset: offset)
        let time = try reader.time()
        let record: CaptureRecord
        switch kind {
        case .handshake:
            let sessionID = try reader.varint()
            let clientAddress = try reader.string()
            let requestLine = try reader.string()
            let requestHeaders = try reader.headers()
            let upstreamURL = try reader.string()
            let status = Int(clamping: try reader.varint())
            let reason = try reader.string()
            let responseHeaders = try reader.headers()
            let subprotocol = try reader.byte() == 0 ? nil : try reader.string()
            record = .handshake(Handshake(
                time: time, sessionID: sessionID, clientAddress: clientAddress, requestLine: requestLine,
                requestHeaders: requestHeaders, upstreamURL: upstreamURL, responseStatus: status,
                responseReason: reason, responseHeaders: responseHeaders, subprotocol: subprotocol
            ))
        case .frame:
            let direction = try reader.direction()
            guard let leg = CaptureLeg(rawValue: try reader.byte()) else { throw reader.malformed("unknown leg") }
            record = .frame(Frame(time: time, direction: direction, leg: leg, bytes: try reader.bytes()))
        case .messageHead:
            let direction = try reader.direction()
            let number = try reader.varint()
            let flags = FrameFlags(rawValue: try reader.byte())
            record = .messageHead(MessageHeadRecord(
                time: time, direction: direction, number: number, flags: flags, properties: try reader.properties()
            ))
        case .verdict:
            record = .verdict(Verdict(
                time: time, direction: try reader.direction(), number: try reader.varint(),
                action: try reader.string(), reason: try reader.string()
            ))
        case .dropped:
            record = .dropped(Dropped(time: time, count: try reader.varint(), reason: try reader.string()))
        case .close:
            guard let side = CaptureSide(rawValue: try reader.byte()) else { throw reader.malformed("unknown side") }
            let code = try reader.varint()
            guard code <= UInt64(UInt16.max) + 1 else { throw reader.malformed("close code out of range") }
            record = .close(Close(
                time: time, side: side, code: code == 0 ? nil : UInt16(code - 1), reason: try reader.string()
            ))
        case .note:
            record = .note(time: time, text: try reader.string())
        }
        guard reader.isAtEnd else { throw reader.malformed("\(reader.remaining) unexpected bytes after the body") }
        return record
    }
}

extension ByteBuffer {
    mutating func writeCaptureVarint(_ value: UInt64) { _ = Varint.write(value, to: &self) }

    mutating func writeCaptureString(_ string: String) {
        writeCaptureVarint(UInt64(string.utf8.count))
        writeString(string)
    }

    /// Nanoseconds since 1970; times before 1970 are stored as 1970.
    mutating func writeCaptureTime(_ time: CaptureTimestamp) {
        let nanoseconds = time.seconds < 0 ? 0 : UInt64(time.seconds) &* 1_000_000_000 &+ UInt64(time.nanoseconds)
        writeCaptureVarint(nanoseconds)
    }

    mutating func writeCaptureHeaders(_ headers: HTTPHeaderFields) {
        writeCaptureVarint(UInt64(headers.count))
        for field in headers {
            writeCaptureString(field.name)
            writeCaptureString(field.value)
        }
    }
}

/// Reads the fields of one record body; every shortfall is a ``CaptureError/Code/malformedCaptureRecord``.
struct RecordBodyReader {
    var buffer: ByteBuffer
    let offset: Int64

    var isAtEnd: Bool { buffer.readableBytes == 0 }
    var remaining: Int { buffer.readableBytes }

    func malformed(_ reason: String) -> CaptureError { .malformedCaptureRecord(offset: offset, reason: reason) }

    mutating func byte() throws -> UInt8 {
        guard let value = buffer.readInteger(as: UInt8.self) else { throw malformed("the body ends early") }
        return value
    }

    mutating func varint() throws -> UInt64 {
        do {
            return try Varint.read(from: &buffer)
        } catch {
            throw malformed("bad varint (\(error.detail))")
        }
    }

    mutating func time() throws -> CaptureTimestamp {
        let nanoseconds = try varint()
        return CaptureTimestamp(
            seconds: Int64(nanoseconds / 1_000_000_000), nanoseconds: UInt32(nanoseconds % 1_000_000_000)
        )
    }

    mutating func direction() throws -> BLIPDirection {
        guard let direction = BLIPDirection(rawValue: Int(try byte())) else { throw malformed("unknown direction") }
        return direction
    }

    mutating func bytes() throws -> ByteBuffer {
        let count = try varint()
        guard count <= UInt64(buffer.readableBytes), let slice = buffer.readSlice(length: Int(count)) else {
            throw malformed("a field of \(count) bytes runs past the body")
        }
        return slice
    }

    mutating func string() throws -> String {
        let bytes = try bytes()
        return String(decoding: bytes.readableBytesView, as: UTF8.self)
    }

    mutating func headers() throws -> HTTPHeaderFields {
        let count = try varint()
        guard count <= UInt64(buffer.readableBytes) else { throw malformed("header count \(count) is impossible") }
        var headers = HTTPHeaderFields()
        for _ in 0..<count { headers.append(name: try string(), value: try string()) }
        return headers
    }

    mutating func properties() throws -> Properties {
        do {
            return try Properties.decode(from: &buffer, maxSize: CaptureFileFormat.maxRecordBytes)
        } catch {
            throw malformed("bad properties (\(error.detail))")
        }
    }
}

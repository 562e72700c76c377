import BLIPCore
import Capture
import FuzzSupport
import NIOCore

/// A `.blipcap` capture file, as `blipscope inspect` reads one: ``CaptureReader`` (header,
/// records, CRCs, resynchronizing past damage, migrating version-1 records), then
/// ``CaptureFileImporter`` and the inspector.
///
/// Input: a mode byte, then the file. Mode bit 0: the file is the input as is (else a valid
/// header comes first); bit 1: each record's CRC is fixed before writing (records are walked by
/// their length fields), so mutations reach the record decoders instead of the CRC check.
private let file = TemporaryFile(name: "input.blipcap")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    var bytes: [UInt8] = []
    if mode & 1 == 0 {
        bytes = CaptureFileFormat.magic + [1, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0]
    }
    var records = input.rest()
    if mode & 2 != 0 { fixRecordChecksums(&records) }
    bytes += records
    file.write(bytes)

    do {
        let reader = try CaptureReader(path: file.path)
        var count = 0
        while let record = try reader.next() {
            count += 1
            _ = record.kind
        }
        fuzzCheck(reader.ending != nil, "no ending after the last record")
        fuzzCheck(reader.recordsRead == count, "recordsRead \(reader.recordsRead), \(count) returned")
        var previousEnd: Int64 = 0
        for range in reader.damage {
            fuzzCheck(range.offset >= previousEnd && range.bytes > 0, "damaged ranges overlap or are empty")
            previousEnd = range.offset + Int64(range.bytes)
            fuzzCheck(previousEnd <= Int64(bytes.count), "a damaged range past the end of the file")
        }
    } catch {
        _ = "\(error)"
    }
    do {
        let session = try CaptureFileImporter.importSession(paths: [file.path])
        inspectAll(session.connections)
    } catch {
        _ = "\(error)"
    }
    return 0
}

/// Walks `len32le || content || crc32le` records and writes each one's right CRC.
private func fixRecordChecksums(_ bytes: inout [UInt8]) {
    var start = 0
    while start + 4 <= bytes.count {
        let length = Int(bytes[start]) | Int(bytes[start + 1]) << 8 | Int(bytes[start + 2]) << 16
            | Int(bytes[start + 3]) << 24
        let end = start + 4 + length + 4
        guard end <= bytes.count else { return }
        var checksum = RunningChecksum()
        bytes.withUnsafeBytes { checksum.update(UnsafeRawBufferPointer(rebasing: $0[(start + 4)..<(start + 4 + length)])) }
        for index in 0..<4 { bytes[start + 4 + length + index] = UInt8(truncatingIfNeeded: checksum.value >> (8 * index)) }
        start = end
    }
}

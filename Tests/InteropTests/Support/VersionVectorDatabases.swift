import Foundation
import Replication
import Testing

extension CBLite {
    /// A new, empty version-vector database (`--upgrade=vv`), with its blob folder.
    func vectorDatabase(_ name: String) throws -> String {
        let path = directory.appendingPathComponent("\(name).cblite2").path
        let made = try run(["--create", "--upgrade=vv", "info", path])
        guard made.status == 0 else { throw CBLiteFailure(made.output) }
        try FileManager.default.createDirectory(atPath: path + "/Attachments", withIntermediateDirectories: true)
        return path
    }

    /// Writes `documents` with the tool's interactive `put` (cblite 4.0's `cp` import crashes at
    /// its end), so each gets a version of the database's own.
    func put(_ documents: [[String: Any]], into path: String) throws {
        var script = ""
        for var document in documents {
            let id = document.removeValue(forKey: "_id") as! String
            script += "put \(id) " + String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self) + "\n"
        }
        let result = try start(["--writeable", path], input: script + "quit\n").finish(within: 120)
        guard result.status == 0 else { throw CBLiteFailure(result.output) }
    }
}

extension InteropHarness {
    /// 0 decode errors, CBMobile_4 chosen, and no violations; no findings either for sessions
    /// that ended on their own (a killed continuous one may leave work outstanding), except the
    /// `allowed` kinds (a close fault's `closedMidTransfer`).
    func checkVersionVectorAnalysis(findings: Bool = true, allowing allowed: Set<Finding.Kind> = [],
                                    sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(events.decodeErrors == 0, sourceLocation: sourceLocation)
        #expect(!events.summaries.isEmpty, "the relay saw the sessions", sourceLocation: sourceLocation)
        for summary in events.summaries {
            #expect(summary.info.subprotocol == "BLIP_3+CBMobile_4", sourceLocation: sourceLocation)
            #expect(summary.replication?.protocolViolations == 0, sourceLocation: sourceLocation)
            let found = (summary.replication?.findings ?? []).filter { !allowed.contains($0.kind) }.map { "\($0.kind)" }
            if findings { #expect(found.isEmpty, "\(found)", sourceLocation: sourceLocation) }
        }
    }
}

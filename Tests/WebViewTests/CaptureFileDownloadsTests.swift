import Foundation
import Testing
@testable import WebView

/// Which sessions the page offers a capture for: this run's files only, found by name, without
/// listing a directory that may hold any number of files from earlier runs.
@Suite("Capture downloads")
struct CaptureFileDownloadsTests {
    @Test("a session is offered its own run's capture, never an earlier run's file of the same session number")
    func onlyThisRunsFilesAreOffered() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-downloads-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["1700000000-41-5-1.blipcap", "1700000000-41-6-1.blipcap", "1800000000-42-6-1.blipcap",
                     "1800000000-42-6-2.blipcap", "1800000000-42-8-2.blipcap"] {
            #expect(FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: Data()))
        }
        let downloads = CaptureFileDownloads(directory: directory, run: "1800000000-42")
        #expect(downloads.capturedSessions(among: [5, 6, 7, 8]) == [6], "session 5 had a file in an earlier run only; 8 lacks its first part")
        #expect(downloads.captureFile(sessionID: 6) == "\(directory)/1800000000-42-6-1.blipcap")
        #expect(downloads.captureFile(sessionID: 5) == nil)
    }

    @Test("files opened by 'blipscope web' are offered by their session")
    func openedFilesAreOffered() {
        let downloads = CaptureFileDownloads(files: [3: "/captures/a.blipcap"])
        #expect(downloads.capturedSessions(among: [1, 3]) == [3])
        #expect(downloads.captureFile(sessionID: 3) == "/captures/a.blipcap")
    }
}

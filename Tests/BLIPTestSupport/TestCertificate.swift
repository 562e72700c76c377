import Foundation

/// A self-signed EC certificate for 127.0.0.1 / localhost, made with the openssl CLI in a
/// temporary directory when a test needs wss; the test removes it (``remove()``) when done.
public struct TestCertificate {
    public let directory: URL
    public var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
    public var keyPath: String { directory.appendingPathComponent("key.pem").path }

    /// Deletes the certificate's directory.
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    public static func make() async throws -> TestCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = TestCertificate(directory: directory)
        var made = false
        defer { if !made { certificate.remove() } }
        let openssl = try await RunningCommand.run("/usr/bin/env", [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", certificate.keyPath, "-out", certificate.certificatePath,
        ])
        guard openssl.status == 0 else { throw CommandFailure("openssl could not make a test certificate:\n\(openssl.errors)") }
        made = true
        return certificate
    }
}

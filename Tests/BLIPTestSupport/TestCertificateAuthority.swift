import Foundation

/// A throwaway certificate authority and a server certificate it signed, for 127.0.0.1 and
/// localhost, made with the openssl CLI in a temporary directory, for tests of TLS clients that
/// verify against a CA file (`rediss://`). The test removes it (``remove()``) when done.
public struct TestCertificateAuthority: Sendable {
    public let directory: URL
    /// The CA's certificate: what a client trusts.
    public var caCertificatePath: String { directory.appendingPathComponent("ca.pem").path }
    /// The server's certificate, signed by the CA.
    public var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
    public var keyPath: String { directory.appendingPathComponent("key.pem").path }

    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A new CA named `name` and a server certificate from it.
    public static func make(name: String = "BlipScope test CA") async throws -> TestCertificateAuthority {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let authority = TestCertificateAuthority(directory: directory)
        var made = false
        defer { if !made { authority.remove() } }
        let caKey = directory.appendingPathComponent("ca-key.pem").path
        let request = directory.appendingPathComponent("server.csr").path
        let extensions = directory.appendingPathComponent("server.ext")
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(to: extensions, atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await openssl(["req", "-x509"] + ec + ["-days", "2", "-subj", "/CN=\(name)",
                          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                          "-keyout", caKey, "-out", authority.caCertificatePath])
        try await openssl(["req"] + ec + ["-subj", "/CN=localhost", "-keyout", authority.keyPath, "-out", request])
        try await openssl(["x509", "-req", "-in", request, "-CA", authority.caCertificatePath, "-CAkey", caKey,
                          "-CAcreateserial", "-days", "2", "-extfile", extensions.path, "-out", authority.certificatePath])
        made = true
        return authority
    }

    private static func openssl(_ arguments: [String]) async throws {
        let result = try await RunningCommand.run("/usr/bin/env", ["openssl"] + arguments, within: 60)
        guard result.status == 0 else {
            throw CommandFailure("openssl \(arguments.first ?? "") could not make a test certificate:\n\(result.errors)")
        }
    }
}

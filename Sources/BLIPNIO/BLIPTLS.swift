import NIOSSL

/// TLS for the accepting side of a BLIP WebSocket (wss): a PEM certificate chain and private key.
///
/// Loaded once when a server starts; a bad path or key fails the start, not a connection.
public struct BLIPServerTLS: Sendable, Equatable {
    /// PEM file holding the server certificate, then any intermediates.
    public var certificateChainPath: String
    /// PEM file holding the private key of the first certificate.
    public var privateKeyPath: String

    public init(certificateChainPath: String, privateKeyPath: String) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
    }

    /// Builds the NIOSSL context (TLS 1.2+, no ALPN: WebSocket over HTTP/1.1 only).
    public func makeContext() throws(BLIPTLSError) -> NIOSSLContext {
        let chain = try BLIPTLSError.loading(.certificateChain, certificateChainPath) {
            let certificates = try NIOSSLCertificate.fromPEMFile(certificateChainPath)
            guard !certificates.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
            return certificates.map { NIOSSLCertificateSource.certificate($0) }
        }
        let key = try BLIPTLSError.loading(.privateKey, privateKeyPath) { try NIOSSLPrivateKey(file: privateKeyPath, format: .pem) }
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw BLIPTLSError(file: .privateKey, path: privateKeyPath,
                               cause: .rejected("does not go with the certificate in \(certificateChainPath) (\(error))"))
        }
    }
}

/// TLS for the dialling side of a BLIP WebSocket (wss).
///
/// Trust comes from a CA bundle when one is given, else from the system roots. `insecure` turns
/// off certificate and host-name verification entirely; it exists for test gateways only.
public struct BLIPClientTLS: Sendable, Equatable {
    /// PEM bundle of trusted CAs, or nil for the system's roots.
    public var caBundlePath: String?
    /// Skip all verification. Never the default.
    public var insecure: Bool

    public init(caBundlePath: String? = nil, insecure: Bool = false) {
        self.caBundlePath = caBundlePath
        self.insecure = insecure
    }

    public func makeContext() throws(BLIPTLSError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if insecure {
            configuration.certificateVerification = .none
        } else if let caBundlePath {
            let roots = try BLIPTLSError.loading(.caBundle, caBundlePath) {
                let certificates = try NIOSSLCertificate.fromPEMFile(caBundlePath)
                guard !certificates.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
                return certificates
            }
            configuration.trustRoots = .certificates(roots)
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw BLIPTLSError(file: .caBundle, path: caBundlePath ?? "(system roots)", cause: .rejected("\(error)"))
        }
    }
}

import Foundation

/// The page and its script and style, built into the binary as SwiftPM resources
/// (`Resources/ui`, copied as they are) and read from the module's bundle once. Nothing is
/// fetched from the internet: the page is one HTML file, one script, one style sheet, the two
/// inlined into the page when it is served (so one request, which may carry `?access_token=`,
/// brings everything: a `<script src>` could not carry the admin listener's token).
public enum WebAssets {
    static let types = ["html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
                        "css": "text/css; charset=utf-8", "svg": "image/svg+xml"]

    /// The asset files by name, read once.
    static let files: [String: [UInt8]] = {
        var files: [String: [UInt8]] = [:]
        for name in ["index.html", "app.js", "app.css"] {
            let parts = name.split(separator: ".")
            if let url = Bundle.module.url(forResource: String(parts[0]), withExtension: String(parts[1]), subdirectory: "ui"),
               let data = try? Data(contentsOf: url) {
                files[name] = Array(data)
            }
        }
        if let page = files["index.html"] {
            let text = String(decoding: page, as: UTF8.self)
                .replacingOccurrences(of: "/*APP_CSS*/", with: String(decoding: files["app.css"] ?? [], as: UTF8.self))
                .replacingOccurrences(of: "/*APP_JS*/", with: String(decoding: files["app.js"] ?? [], as: UTF8.self))
            files["index.html"] = Array(text.utf8)
        }
        return files
    }()

    /// The bytes of an asset, nil when unknown (or the bundle could not be found).
    public static func asset(_ name: String) -> [UInt8]? { files[name] }

    static func response(for name: String) -> WebResponse {
        guard let bytes = files[name], let ext = name.split(separator: ".").last, let type = types[String(ext)] else {
            return .notFound("no such asset")
        }
        return .content(status: 200, contentType: type, body: bytes)
    }
}

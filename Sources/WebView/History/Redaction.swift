import BLIPCore
import Capture

/// The one redaction rule of the product (``PropertyRedaction``), applied to everything the web
/// view shows: property values whose names look secret become the placeholder.
enum Redaction {
    static func redact(_ properties: Properties) -> [(key: String, value: String)] {
        PropertyRedaction.redact(properties).pairs
    }
}

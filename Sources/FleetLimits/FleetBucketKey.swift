/// A limit key: the rule and which of its buckets (`messages|user:alice`).
public struct FleetBucketKey: Sendable, Hashable {
    public var rule: String
    public var bucket: String

    public init(rule: String, bucket: String) {
        self.rule = rule
        self.bucket = bucket
    }
}

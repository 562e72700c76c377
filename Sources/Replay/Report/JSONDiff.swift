import Replication

/// The differences between two JSON values as a list of paths with the old and new value at
/// each. Paths start at `root` and go on with `.key` for object members and `[i]` for array
/// items (`body.remote`, `body[3][0]`). A member or item only one side has shows `nil` on the
/// other; values of different kinds differ at their own path, not below it.
public enum JSONDiff {
    public struct Change: Sendable, Hashable, Codable {
        public var path: String
        /// Compact JSON of the recorded value; nil when it was absent.
        public var old: String?
        /// Compact JSON of the new value; nil when it is absent.
        public var new: String?

        public init(path: String, old: String?, new: String?) {
            self.path = path
            self.old = old
            self.new = new
        }
    }

    public static func changes(from old: JSONValue, to new: JSONValue, root: String = "") -> [Change] {
        var result: [Change] = []
        collect(old, new, path: root, into: &result)
        return result
    }

    private static func collect(_ old: JSONValue?, _ new: JSONValue?, path: String, into result: inout [Change]) {
        switch (old, new) {
        case (.object(let left)?, .object(let right)?):
            for key in Set(left.keys).union(right.keys).sorted() {
                collect(left[key], right[key], path: path + "." + key, into: &result)
            }
        case (.array(let left)?, .array(let right)?):
            for index in 0..<max(left.count, right.count) {
                collect(index < left.count ? left[index] : nil, index < right.count ? right[index] : nil,
                        path: path + "[\(index)]", into: &result)
            }
        default:
            guard old != new else { return }
            result.append(Change(path: path, old: old?.description, new: new?.description))
        }
    }
}

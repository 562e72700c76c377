import Foundation

/// A Prometheus text exposition read just far enough to add samples up: each line
/// `name{label="value",…} number`; comments and blank lines are skipped, and so is a line that
/// does not parse (a soak reports what it can read rather than stopping).
public struct MetricsText: Sendable {
    public struct Sample: Sendable, Equatable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    public let samples: [Sample]

    public init(_ text: String) {
        var samples: [Sample] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else {
                samples.append(Sample(name: String(series), labels: [:], value: value))
                continue
            }
            guard series.last == "}" else { continue }
            samples.append(Sample(name: String(series[..<brace]),
                                  labels: Self.labels(series[series.index(after: brace)..<series.index(before: series.endIndex)]),
                                  value: value))
        }
        self.samples = samples
    }

    /// The sum over every series of `name` (0 when there is none).
    public func sum(_ name: String) -> Int {
        Int(samples.lazy.filter { $0.name == name }.reduce(0) { $0 + $1.value })
    }

    /// The sums of `name`'s series grouped by the value of `label`.
    public func sums(_ name: String, by label: String) -> [String: Int] {
        var sums: [String: Int] = [:]
        for sample in samples where sample.name == name {
            sums[sample.labels[label] ?? "", default: 0] += Int(sample.value)
        }
        return sums
    }

    /// `a="x",b="y\"z"` → [a: x, b: y"z].
    private static func labels(_ text: Substring) -> [String: String] {
        var labels: [String: String] = [:]
        var rest = text[...]
        while let equals = rest.firstIndex(of: "=") {
            let key = rest[..<equals].trimmingCharacters(in: [",", " "])
            var index = rest.index(after: equals)
            guard index < rest.endIndex, rest[index] == "\"" else { break }
            index = rest.index(after: index)
            var value = ""
            while index < rest.endIndex, rest[index] != "\"" {
                if rest[index] == "\\", rest.index(after: index) < rest.endIndex {
                    index = rest.index(after: index)
                    value.append(rest[index] == "n" ? "\n" : rest[index])
                } else {
                    value.append(rest[index])
                }
                index = rest.index(after: index)
            }
            labels[key] = value
            rest = index < rest.endIndex ? rest[rest.index(after: index)...] : ""
        }
        return labels
    }
}

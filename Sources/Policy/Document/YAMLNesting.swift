import CYaml

/// How deeply YAML text nests its collections, read with libyaml's event parser, which keeps its
/// state on the heap: a pre-check before Yams composes the document, since Yams' composer
/// recurses once per level and a few kilobytes of `{{{{` or `- - - -` overflow the stack.
enum YAMLNesting {
    /// Whether a collection in `yaml` lies more than `limit` levels deep. Stops at the first
    /// event past the limit; false for text libyaml cannot parse (Yams reports that).
    static func exceeds(_ limit: Int, in yaml: String) -> Bool {
        let bytes = Array(yaml.utf8)
        guard !bytes.isEmpty else { return false }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return false }
        defer { yaml_parser_delete(&parser) }
        // Configured as Yams configures its parser, so both read the same events.
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        return bytes.withUnsafeBufferPointer { input in
            yaml_parser_set_input_string(&parser, input.baseAddress, input.count)
            var depth = 0
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return false }
                let type = event.type
                yaml_event_delete(&event)
                switch type {
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    depth += 1
                    if depth > limit { return true }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    depth -= 1
                case YAML_STREAM_END_EVENT:
                    return false
                default:
                    break
                }
            }
        }
    }
}

import Foundation

/// A job ticket: the sidecar `<document>.ticket` that picks, for one document,
/// among the options its folder allows (the service's equivalent of seed 000's
/// option-picking UI). Same `key = value` syntax as the configuration, without
/// sections; `export.KEY` or `print.KEY` applies to one destination, a bare KEY
/// to every destination it means something for.
public struct JobTicket: Sendable, Codable, Equatable {
    public struct Choices: Sendable, Codable, Equatable {
        public var pages: PageSelection?
        public var annotations: AnnotationOption?
        public var format: FileFormat?
        public var copies: Int?
        public var sides: String?
        /// The output's Title; any Unicode, control characters removed.
        public var title: String?
        /// The output's file name without extension (export), or the job name (print).
        public var name: String?

        public init() {}

        /// `other`'s choices where it has them, else these.
        func overridden(by other: Choices?) -> Choices {
            guard let other else { return self }
            var c = self
            c.pages = other.pages ?? pages
            c.annotations = other.annotations ?? annotations
            c.format = other.format ?? format
            c.copies = other.copies ?? copies
            c.sides = other.sides ?? sides
            c.title = other.title ?? title
            c.name = other.name ?? name
            return c
        }
    }

    public var common = Choices()
    public var export: Choices?
    public var print: Choices?

    public init() {}

    public func choices(for destination: DestinationKind) -> Choices {
        common.overridden(by: destination == .export ? export : print)
    }

    /// The file name suffix that makes a file the ticket of the document named without it.
    public static let suffix = ".ticket"

    /// The longest ticket read; a ticket is a few lines.
    public static let maxSize = 64 << 10

    static let keys = ["pages", "annotations", "format", "copies", "sides", "title", "name"]

    /// Parses a ticket; every problem is collected, each with its line.
    public static func parse(_ text: String, file: String) -> Result<JobTicket, TicketProblems> {
        // The configuration's INI reader wants a section; line numbers shift by one.
        let ini = INIFile(text: "[ticket]\n" + text, file: file)
        var problems = ini.problems.map { "line \($0.line - 1): \($0.message)" }
        var ticket = JobTicket()
        var seen: [String: Int] = [:]
        for entry in ini.sections.first?.entries ?? [] {
            let line = entry.line - 1
            if let first = seen[entry.key] {
                problems.append("line \(line): \(entry.key) is set twice (first on line \(first))")
                continue
            }
            seen[entry.key] = line
            let parts = entry.key.split(separator: ".", maxSplits: 1).map(String.init)
            var destination: DestinationKind?
            var key = entry.key
            if parts.count == 2, let kind = DestinationKind(rawValue: parts[0]) {
                destination = kind
                key = parts[1]
            }
            var choices = destination == .export ? ticket.export ?? Choices() : destination == .print ? ticket.print ?? Choices() : ticket.common
            if let problem = apply(key: key, value: entry.value, to: &choices, destination: destination) {
                problems.append("line \(line): \(problem)")
                continue
            }
            switch destination {
            case .export?: ticket.export = choices
            case .print?: ticket.print = choices
            case nil: ticket.common = choices
            }
        }
        return problems.isEmpty ? .success(ticket) : .failure(TicketProblems(messages: problems))
    }

    private static func apply(key: String, value: String, to c: inout Choices, destination: DestinationKind?) -> String? {
        let fullKey = (destination.map { $0.rawValue + "." } ?? "") + key
        switch key {
        case "pages":
            switch PageSelection.parseList(value) {
            case .success(let list) where list.count == 1: c.pages = list[0]
            case .success: return "\(fullKey) must name one page selection, not a list"
            case .failure(let m): return "\(fullKey): \(m.text)"
            }
        case "annotations":
            guard let a = AnnotationOption(rawValue: value.lowercased()) else {
                return "\(fullKey) must be one of \(AnnotationOption.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(value)\""
            }
            c.annotations = a
        case "format":
            guard let f = FileFormat(rawValue: value.lowercased()) else {
                return "\(fullKey) must be one of \(FileFormat.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(value)\""
            }
            c.format = f
        case "copies" where destination != .export:
            guard let n = Int(value), n >= 1 else { return "\(fullKey) must be a number of copies (1 or more), not \"\(value)\"" }
            c.copies = n
        case "sides" where destination != .export:
            guard SharingConfiguration.sidesValues.contains(value) else {
                return "\(fullKey) must be one of \(SharingConfiguration.sidesValues.joined(separator: ", ")), not \"\(value)\""
            }
            c.sides = value
        case "title":
            c.title = FileNameSanitizer.cleanTitle(String(value.prefix(1000)))
        case "name":
            let name = FileNameSanitizer.cleanTitle(String(value.prefix(1000)))
            guard !name.isEmpty else { return "\(fullKey) is empty" }
            c.name = name
        default:
            let all = keys + keys.map { "export." + $0 } + keys.map { "print." + $0 }
            return "unknown key \(fullKey); a ticket may set \(keys.joined(separator: ", ")) (or export.KEY / print.KEY)\(Spelling.suggestion(for: fullKey, among: all))"
        }
        return nil
    }
}

public struct TicketProblems: Error, Sendable, Equatable, CustomStringConvertible {
    public let messages: [String]
    public var description: String { messages.joined(separator: "; ") }
}

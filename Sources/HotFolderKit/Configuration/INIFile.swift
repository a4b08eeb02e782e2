import Foundation

/// A message about the configuration, before it is tied to a file and line.
public struct ConfigurationMessage: Error, Sendable, Equatable, CustomStringConvertible {
    public let text: String
    public init(_ text: String) { self.text = text }
    public var description: String { text }
}

/// One problem in a configuration file, printed as `FILE:LINE: message`.
public struct ConfigurationProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { "\(file):\(line): \(message)" }
}

public struct ConfigurationErrors: Error, Sendable, CustomStringConvertible {
    public let problems: [ConfigurationProblem]
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// The INI dialect of smb.conf: `[section]`, `key = value`, `#` or `;` comments
/// on their own line, keys case-insensitive.
struct INIFile {
    struct Entry {
        let key: String
        let value: String
        let line: Int
    }

    struct Section {
        let name: String
        let line: Int
        var entries: [Entry] = []
    }

    var sections: [Section] = []
    var problems: [ConfigurationProblem] = []

    init(text: String, file: String) {
        var current: Section?
        var lineNumber = 0
        // "\r\n" is one Character in Swift, so split on every kind of line end.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            lineNumber += 1
            let line = rawLine.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else {
                    problems.append(.init(file: file, line: lineNumber, message: "section header must end with ]"))
                    continue
                }
                if let c = current { sections.append(c) }
                let name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                current = Section(name: name, line: lineNumber)
                continue
            }
            guard let eq = line.firstIndex(of: "=") else {
                problems.append(.init(file: file, line: lineNumber, message: "expected key = value, found \"\(line)\""))
                continue
            }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            guard current != nil else {
                problems.append(.init(file: file, line: lineNumber, message: "\(key) is outside any section; put it under [service] or [folder NAME]"))
                continue
            }
            current?.entries.append(Entry(key: key, value: value, line: lineNumber))
        }
        if let c = current { sections.append(c) }
    }
}

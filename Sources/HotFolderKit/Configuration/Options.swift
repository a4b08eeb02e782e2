import Foundation

/// The option categories of a sharing configuration (seed 000), as a folder's
/// configuration names them.

public enum DestinationKind: String, Sendable, CaseIterable, Codable {
    case export
    case print
}

public enum FileFormat: String, Sendable, CaseIterable, Codable {
    case pdf
    case original
    /// One image file per selected page.
    case image
}

/// The encoding of `image` output.
public enum ImageType: String, Sendable, CaseIterable, Codable {
    case png
    case jpeg

    /// The file name extension, without the dot.
    public var ext: String { self == .png ? "png" : "jpg" }
}

/// Whether documents come with a job ticket (`<file>.ticket`).
public enum TicketPolicy: String, Sendable, CaseIterable, Codable {
    /// A ticket that arrives with its document is used; none is fine.
    case optional
    /// A document waits up to `ticket-wait` for its ticket and fails without one.
    case required
}

public enum AnnotationOption: String, Sendable, CaseIterable, Codable {
    case embed
    case flatten
    case flattenForPrint = "flatten-for-print"
    case remove
    /// The pages with their annotations flattened, followed by pages listing them.
    case summary
}

public enum CollisionPolicy: String, Sendable, CaseIterable, Codable {
    case rename
    case replace
    case fail
}

public enum AfterSuccess: String, Sendable, CaseIterable, Codable {
    case move
    case delete
}

/// An inclusive range of 1-based page numbers; `upper == nil` means "to the end".
public struct PageRange: Hashable, Sendable, Codable, CustomStringConvertible {
    public let lower: Int
    public let upper: Int?

    public init(lower: Int, upper: Int?) {
        self.lower = lower
        self.upper = upper
    }

    public var description: String {
        switch upper {
        case nil: "\(lower)-"
        case let u? where u == lower: "\(lower)"
        case let u?: "\(lower)-\(u)"
        }
    }
}

public enum PageSelection: Hashable, Sendable, CustomStringConvertible {
    case all
    case first
    case last
    case annotated
    case ranges([PageRange])
    /// Whatever range a job ticket asks for (seed 000's `.range`); without a
    /// ticket giving one it does not apply.
    case range

    public var description: String {
        switch self {
        case .range: "range"
        case .all: "all"
        case .first: "first"
        case .last: "last"
        case .annotated: "annotated"
        case .ranges(let r): r.map(\.description).joined(separator: ",")
        }
    }

    /// Parses `1-3,5,8-` (1-based, inclusive, `N-` to the end).
    public static func parseRanges(_ text: String) -> Result<[PageRange], ConfigurationMessage> {
        var ranges: [PageRange] = []
        for rawPart in text.split(separator: ",", omittingEmptySubsequences: false) {
            let part = rawPart.trimmingCharacters(in: .whitespaces)
            if part.isEmpty {
                return .failure(ConfigurationMessage("empty page range in \"\(text)\""))
            }
            let bounds = part.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard let lower = Int(bounds[0]), lower >= 1 else {
                return .failure(ConfigurationMessage("\"\(part)\" is not a page range: pages are numbered from 1, as in 1-3,5,8-"))
            }
            if bounds.count == 1 {
                ranges.append(PageRange(lower: lower, upper: lower))
            } else if bounds[1].isEmpty {
                ranges.append(PageRange(lower: lower, upper: nil))
            } else if let upper = Int(bounds[1]), upper >= lower {
                ranges.append(PageRange(lower: lower, upper: upper))
            } else {
                return .failure(ConfigurationMessage("\"\(part)\" is not a page range: the end must be a page number not below the start"))
            }
        }
        return .success(ranges)
    }

    /// Parses one value of a page-selection option list. Adjacent range pieces
    /// belong together: `first, 1-3,5` is two options, `first` and `1-3,5`.
    public static func parseList(_ text: String) -> Result<[PageSelection], ConfigurationMessage> {
        var options: [PageSelection] = []
        var pendingRanges: [String] = []
        func flush() -> ConfigurationMessage? {
            guard !pendingRanges.isEmpty else { return nil }
            defer { pendingRanges.removeAll() }
            switch parseRanges(pendingRanges.joined(separator: ",")) {
            case .success(let r): options.append(.ranges(r)); return nil
            case .failure(let m): return m
            }
        }
        for raw in text.split(separator: ",") {
            let token = raw.trimmingCharacters(in: .whitespaces).lowercased()
            let keyword: PageSelection? = switch token {
            case "all": .all
            case "first": .first
            case "last": .last
            case "annotated": .annotated
            case "range": .range
            default: nil
            }
            if let keyword {
                if let m = flush() { return .failure(m) }
                options.append(keyword)
            } else if token.first?.isNumber == true {
                pendingRanges.append(token)
            } else {
                return .failure(ConfigurationMessage("unknown page selection \"\(token)\"; use all, first, last, annotated, range (a job ticket's) or ranges like 1-3,5,8-"))
            }
        }
        if let m = flush() { return .failure(m) }
        if options.isEmpty { return .failure(ConfigurationMessage("no page selection given")) }
        return .success(options)
    }

    /// The 0-based page indexes this selection keeps of a document with
    /// `pageCount` pages, in document order; pages past the end are ignored.
    public func pageIndexes(pageCount: Int, annotatedPages: () -> [Int]) -> [Int] {
        guard pageCount > 0 else { return [] }
        switch self {
        case .all: return Array(0..<pageCount)
        case .first: return [0]
        case .last: return [pageCount - 1]
        case .annotated: return annotatedPages()
        case .range: return []
        case .ranges(let ranges):
            var keep = Set<Int>()
            for r in ranges where r.lower <= pageCount {
                let upper = min(r.upper ?? pageCount, pageCount)
                for page in r.lower...upper { keep.insert(page - 1) }
            }
            return keep.sorted()
        }
    }
}

extension PageSelection: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        switch PageSelection.parseList(text) {
        case .success(let list) where list.count == 1: self = list[0]
        case .success: throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "one page selection expected: \(text)"))
        case .failure(let m): throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: m.text))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

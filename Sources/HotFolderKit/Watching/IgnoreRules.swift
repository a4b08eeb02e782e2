import CSystem
import Glibc

/// Which names in a drop folder are documents: the built-in ignore list (junk
/// that desktops, NAS boxes and uploaders leave behind), then the folder's
/// `ignore =` and `include =` patterns. Matching is case-insensitive.
public struct IgnoreRules: Sendable {
    public static let builtInFiles = [
        ".*", "._*", ".DS_Store", "Thumbs.db", "desktop.ini", "~$*", ".~lock.*#",
        "*.tmp", "*.part", "*.partial", "*.crdownload", "*.filepart",
    ]
    public static let builtInFolders = ["@eaDir", "__MACOSX", ".Trashes", ".*"]

    public let ignore: [String]
    public let include: [String]

    public init(ignore: [String] = [], include: [String] = []) {
        self.ignore = ignore
        self.include = include
    }

    /// nil when `name` is a document to process, else the rule that skips it.
    public func reasonToSkip(file name: String) -> String? {
        if let p = Self.firstMatch(name, Self.builtInFiles) { return "built-in ignore pattern \(p)" }
        if let p = Self.firstMatch(name, ignore) { return "ignore pattern \(p)" }
        // A job ticket counts as included when its document would be.
        let document = name.hasSuffix(JobTicket.suffix) ? String(name.dropLast(JobTicket.suffix.count)) : name
        if !include.isEmpty, Self.firstMatch(document, include) == nil { return "no include pattern matches" }
        return nil
    }

    public func skipsFolder(_ name: String) -> Bool {
        Self.firstMatch(name, Self.builtInFolders) != nil || Self.firstMatch(name, ignore) != nil
    }

    static func firstMatch(_ name: String, _ patterns: [String]) -> String? {
        patterns.first { fnmatch($0, name, HF_FNM_CASEFOLD) == 0 }
    }
}

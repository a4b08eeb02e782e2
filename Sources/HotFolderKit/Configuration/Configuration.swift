import Foundation

public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warning, error

    var rank: Int { LogLevel.allCases.firstIndex(of: self) ?? 0 }
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// One drop folder and what happens to what lands in it.
public enum WatchMode: String, Sendable, CaseIterable, Codable {
    case auto, inotify, poll
}

public struct FolderConfiguration: Sendable, Hashable, Codable {
    public var name: String
    public var line: Int = 0
    public var path: String = ""
    public var recursive = false
    /// Seconds a file must stay quiet after its last write before it is taken.
    public var settle: Double = 1
    /// How changes are seen: inotify, polling, or (auto) polling on file
    /// systems where inotify misses remote writes.
    public var watch: WatchMode = .auto
    public var pollInterval: Double = 1
    /// Safety rescan interval in every mode (0: none).
    public var rescan: Double = 300
    public var include: [String] = []
    public var ignore: [String] = []
    public var doneFolder: String = ""
    public var failedFolder: String = ""
    public var afterSuccess: AfterSuccess = .move
    public var password: String?
    /// Larger files fail with that reason instead of being read.
    public var maxFileSize: Int64 = 2 << 30
    public var export: SharingConfiguration?
    public var print: SharingConfiguration?
    public var tickets: TicketPolicy = .optional
    /// How long a document waits for its ticket (required), or a ticket for its document.
    public var ticketWait: Double = 300
    /// The folder's policy: the destinations it may use now (nil: every configured one).
    public var allow: [DestinationKind]?

    public init(name: String) { self.name = name }

    public var destinations: [SharingConfiguration] { [export, print].compactMap { $0 } }

    /// The folder inside the drop folder where claimed documents and their
    /// journals live; on the same file system, so claiming is one rename.
    public var serviceArea: String { path + "/" + FolderConfiguration.serviceAreaName }
    public static let serviceAreaName = ".hotfolder"
}

public struct ServiceConfiguration: Sendable {
    public var file: String
    public var workers = 2
    public var logLevel: LogLevel = .info
    public var cupsServer: String?
    /// Names this service among several on one shared folder (default: the host name).
    public var instance: String = ServiceConfiguration.defaultInstance
    public var folders: [FolderConfiguration] = []
    /// Where documents are generated: isolated worker processes (default) or
    /// in the service's own process.
    public var generation: GenerationMode = .workers
    /// Seconds one document may take to generate before its worker is killed.
    public var jobTimeout: Double = 300
    /// Memory (heap and private mappings, RLIMIT_DATA) a worker may use, in bytes (nil: none).
    public var jobMemory: Int? = 2 << 30
    /// The user to run as when started as root (its groups too).
    public var user: String?
    /// The umask for every file and folder the service creates.
    public var umask: UInt32 = 0o027
    /// Seconds SIGTERM waits for running jobs before the service exits anyway.
    public var shutdownTimeout: Double = 30

    public enum GenerationMode: String, Sendable, CaseIterable {
        case workers
        case inProcess = "in-process"
    }

    public static var defaultInstance: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "default" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "default" : name
    }

    public init(file: String) { self.file = file }

    public func folder(named name: String) -> FolderConfiguration? { folders.first { $0.name == name } }
}

extension ServiceConfiguration {
    public static func load(file: String) throws(ConfigurationErrors) -> ServiceConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ConfigurationErrors(problems: [ConfigurationProblem(file: file, line: 0, message: "cannot read the configuration: \(error.localizedDescription)")])
        }
        return try parse(text: text, file: file)
    }

    public static func parse(text: String, file: String) throws(ConfigurationErrors) -> ServiceConfiguration {
        var loader = ConfigurationLoader(file: file)
        let config = loader.load(text: text)
        if !loader.problems.isEmpty { throw ConfigurationErrors(problems: loader.problems) }
        return config
    }
}

/// Turns INI sections into a configuration, collecting every problem rather
/// than stopping at the first.
struct ConfigurationLoader {
    let file: String
    var problems: [ConfigurationProblem] = []

    init(file: String) { self.file = file }

    var baseDirectory: String {
        let absolute = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        return (absolute as NSString).deletingLastPathComponent
    }

    mutating func problem(_ line: Int, _ message: String) {
        problems.append(ConfigurationProblem(file: file, line: line, message: message))
    }

    mutating func load(text: String) -> ServiceConfiguration {
        let ini = INIFile(text: text, file: file)
        problems += ini.problems
        var config = ServiceConfiguration(file: file)
        var sawService = false
        for section in ini.sections {
            let words = section.name.split(separator: " ", maxSplits: 1).map(String.init)
            switch words.first?.lowercased() {
            case "service" where words.count == 1:
                if sawService { problem(section.line, "[service] appears twice") }
                sawService = true
                applyService(section, to: &config)
            case "folder":
                guard words.count == 2, !words[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                    problem(section.line, "a folder section needs a name: [folder NAME]")
                    continue
                }
                let name = words[1].trimmingCharacters(in: .whitespaces)
                if config.folders.contains(where: { $0.name == name }) {
                    problem(section.line, "folder \"\(name)\" is defined twice")
                    continue
                }
                if let folder = loadFolder(section, name: name) { config.folders.append(folder) }
            default:
                let suggestion = Spelling.suggestion(for: words.first ?? "", among: ["service", "folder"])
                problem(section.line, "unknown section [\(section.name)]; sections are [service] and [folder NAME]\(suggestion)")
            }
        }
        if config.folders.isEmpty && problems.isEmpty {
            problem(0, "no [folder NAME] section: nothing to watch")
        }
        checkFolderRelations(config.folders)
        return config
    }

    // MARK: - [service]

    static let serviceKeys = ["workers", "log-level", "cups-server", "instance", "generation", "job-timeout", "job-memory", "shutdown-timeout", "user", "umask"]

    mutating func applyService(_ section: INIFile.Section, to config: inout ServiceConfiguration) {
        var seen: [String: Int] = [:]
        for entry in section.entries {
            if let first = seen[entry.key] {
                problem(entry.line, "\(entry.key) is set twice (first on line \(first))")
                continue
            }
            seen[entry.key] = entry.line
            switch entry.key {
            case "workers":
                if let n = Int(entry.value), (1...256).contains(n) { config.workers = n } else {
                    problem(entry.line, "workers must be a number from 1 to 256, not \"\(entry.value)\"")
                }
            case "log-level":
                if let level = LogLevel(rawValue: entry.value.lowercased()) { config.logLevel = level } else {
                    problem(entry.line, "log-level must be one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(entry.value)\"")
                }
            case "cups-server":
                config.cupsServer = entry.value.isEmpty ? nil : entry.value
            case "generation":
                if let g = ServiceConfiguration.GenerationMode(rawValue: entry.value.lowercased()) { config.generation = g } else {
                    problem(entry.line, "generation must be workers or in-process, not \"\(entry.value)\"")
                }
            case "job-timeout":
                if let d = Self.duration(entry.value), d > 0 { config.jobTimeout = d } else {
                    problem(entry.line, "job-timeout must be a duration such as 5m, not \"\(entry.value)\"")
                }
            case "user":
                config.user = entry.value.isEmpty ? nil : entry.value
            case "umask":
                if let m = UInt32(entry.value, radix: 8), m <= 0o777 { config.umask = m } else {
                    problem(entry.line, "umask must be an octal mode such as 027, not \"\(entry.value)\"")
                }
            case "shutdown-timeout":
                if let d = Self.duration(entry.value) { config.shutdownTimeout = d } else {
                    problem(entry.line, "shutdown-timeout must be a duration such as 30s, not \"\(entry.value)\"")
                }
            case "job-memory":
                if let size = Self.size(entry.value), size == 0 || size >= 64 << 20 { config.jobMemory = size == 0 ? nil : size } else {
                    problem(entry.line, "job-memory must be a size of at least 64M such as 512M or 2G (0 for no limit), not \"\(entry.value)\"")
                }
            case "instance" where entry.value.isEmpty:
                config.instance = ServiceConfiguration.defaultInstance
            case "instance":
                if entry.value.count <= 64, !entry.value.hasPrefix("."),
                   entry.value.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) {
                    config.instance = entry.value
                } else {
                    problem(entry.line, "instance must be 1-64 letters, digits, - _ or . (not starting with .), not \"\(entry.value)\"")
                }
            default:
                problem(entry.line, "unknown key \(entry.key) in [service]\(Spelling.suggestion(for: entry.key, among: Self.serviceKeys))")
            }
        }
    }

    // MARK: - [folder NAME]

    static let folderKeys = ["path", "recursive", "settle", "watch", "poll-interval", "rescan", "include", "ignore", "done", "failed", "after-success", "password", "max-file-size",
                             "tickets", "ticket-wait", "allow"]
    static let sharingKeys = ["pages", "annotations", "format", "title", "name", "image.type", "image.dpi", "image.quality", "image.max-pages"]
    static let exportKeys = ["to", "collision", "preview", "min-free"]
    static let printKeys = ["printer", "copies", "max-copies", "sides", "media", "color", "orientation", "options", "timeout"]
    static var allFolderKeys: [String] {
        folderKeys + (sharingKeys + exportKeys).map { "export." + $0 } + (sharingKeys + printKeys).map { "print." + $0 }
    }

    mutating func loadFolder(_ section: INIFile.Section, name: String) -> FolderConfiguration? {
        var folder = FolderConfiguration(name: name)
        folder.line = section.line
        let before = problems.count
        var seen: [String: Int] = [:]
        var pathLine = section.line
        var done: String?
        var failed: String?
        var allowLine = section.line
        for entry in section.entries {
            if let first = seen[entry.key] {
                problem(entry.line, "\(entry.key) is set twice (first on line \(first))")
                continue
            }
            seen[entry.key] = entry.line
            let value = entry.value
            let parts = entry.key.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2, let kind = DestinationKind(rawValue: parts[0]) {
                var sharing = (kind == .export ? folder.export : folder.print) ?? SharingConfiguration(destination: kind)
                applySharing(key: parts[1], value: value, line: entry.line, fullKey: entry.key, to: &sharing)
                if kind == .export { folder.export = sharing } else { folder.print = sharing }
                continue
            }
            switch entry.key {
            case "path":
                pathLine = entry.line
                folder.path = resolvePath(value, line: entry.line, key: "path") ?? ""
            case "recursive":
                if let b = Self.bool(value) { folder.recursive = b } else { problem(entry.line, "recursive must be yes or no, not \"\(value)\"") }
            case "settle":
                if let d = Self.duration(value) { folder.settle = d } else {
                    problem(entry.line, "settle must be a duration such as 1s, 500ms or 0, not \"\(value)\"")
                }
            case "watch":
                if let w = WatchMode(rawValue: value.lowercased()) { folder.watch = w } else {
                    problem(entry.line, "watch must be auto, inotify or poll, not \"\(value)\"")
                }
            case "poll-interval":
                if let d = Self.duration(value), d >= 0.05 { folder.pollInterval = d } else {
                    problem(entry.line, "poll-interval must be a duration of at least 50ms, such as 1s, not \"\(value)\"")
                }
            case "rescan":
                if let d = Self.duration(value), d == 0 || d >= 1 { folder.rescan = d } else {
                    problem(entry.line, "rescan must be a duration of at least 1s such as 5m (0 for none), not \"\(value)\"")
                }
            case "include":
                folder.include = Self.patterns(value)
            case "ignore":
                folder.ignore = Self.patterns(value)
            case "done":
                done = resolvePath(value, line: entry.line, key: "done")
            case "failed":
                failed = resolvePath(value, line: entry.line, key: "failed")
            case "after-success":
                if let a = AfterSuccess(rawValue: value.lowercased()) { folder.afterSuccess = a } else {
                    problem(entry.line, "after-success must be move or delete, not \"\(value)\"")
                }
            case "password":
                folder.password = value
            case "max-file-size":
                if let size = Self.size(value), size > 0 { folder.maxFileSize = Int64(size) } else {
                    problem(entry.line, "max-file-size must be a size such as 500M or 2G, not \"\(value)\"")
                }
            case "tickets":
                if let t = TicketPolicy(rawValue: value.lowercased()) { folder.tickets = t } else {
                    problem(entry.line, "tickets must be optional or required, not \"\(value)\"")
                }
            case "ticket-wait":
                if let d = Self.duration(value), d > 0 { folder.ticketWait = d } else {
                    problem(entry.line, "ticket-wait must be a duration such as 5m, not \"\(value)\"")
                }
            case "allow":
                let words = Self.patterns(value).map { $0.lowercased() }
                if words == ["none"] {
                    folder.allow = []
                } else if let list = enumList(value, DestinationKind.self, key: "allow", line: entry.line) {
                    folder.allow = list
                }
                allowLine = entry.line
            default:
                problem(entry.line, "unknown key \(entry.key) in [folder \(name)]\(Spelling.suggestion(for: entry.key, among: Self.allFolderKeys))")
            }
        }
        if seen["path"] == nil {
            problem(section.line, "folder \(name) has no path: add path = /the/drop/folder")
        }
        if let export = folder.export, export.exportFolder.isEmpty {
            problem(section.line, "folder \(name) has export settings but no export.to folder")
        }
        if folder.export == nil && folder.print == nil {
            problem(section.line, "folder \(name) has no destination: add export.to = FOLDER or print.printer = QUEUE")
        }
        if let allow = folder.allow {
            if allow.isEmpty {
                problem(allowLine, "allow = none allows no destination: every document would wait; name the destinations to allow, or remove the folder")
            }
            for kind in allow where !folder.destinations.contains(where: { $0.destination == kind }) {
                problem(allowLine, "allow names \(kind.rawValue), but folder \(name) has no \(kind.rawValue) settings")
            }
        }
        if let p = folder.print, let m = p.maxCopies, p.copies > m {
            problem(section.line, "folder \(name): print.copies = \(p.copies) is more than print.max-copies = \(m)")
        }
        for sharing in folder.destinations {
            for message in OptionResolver.emptyForEveryDocument(sharing, folder: folder) { problem(section.line, "folder \(name): \(message)") }
        }
        if !folder.path.isEmpty {
            folder.doneFolder = done ?? folder.path + "/done"
            folder.failedFolder = failed ?? folder.path + "/failed"
            if folder.path == "/" { problem(pathLine, "the root folder cannot be a drop folder") }
        }
        return problems.count == before ? folder : nil
    }

    mutating func applySharing(key: String, value: String, line: Int, fullKey: String, to sharing: inout SharingConfiguration) {
        let kind = sharing.destination
        switch key {
        case "pages":
            switch PageSelection.parseList(value) {
            case .success(let s): sharing.pageSelections = s
            case .failure(let m): problem(line, "\(fullKey): \(m.text)")
            }
        case "annotations":
            if let list = enumList(value, AnnotationOption.self, key: fullKey, line: line) { sharing.annotationOptions = list }
        case "format":
            if let list = enumList(value, FileFormat.self, key: fullKey, line: line) {
                if kind == .print && list.contains(.image) {
                    problem(line, "\(fullKey): image is not a print format; printers get the PDF (image files dropped here are converted to PDF pages), or the original")
                } else {
                    sharing.fileFormats = list
                }
            }
        case "image.type":
            if let t = ImageType(rawValue: value.lowercased() == "jpg" ? "jpeg" : value.lowercased()) { sharing.imageType = t } else {
                problem(line, "\(fullKey) must be png or jpeg, not \"\(value)\"")
            }
        case "image.dpi":
            if let d = Double(value), (10...1200).contains(d) { sharing.imageDPI = d } else {
                problem(line, "\(fullKey) must be a resolution from 10 to 1200 (dots per inch), not \"\(value)\"")
            }
        case "image.quality":
            if let q = Int(value), (1...100).contains(q) { sharing.imageQuality = q } else {
                problem(line, "\(fullKey) must be a JPEG quality from 1 to 100, not \"\(value)\"")
            }
        case "image.max-pages":
            if let n = Int(value), (1...10_000).contains(n) { sharing.imageMaxPages = n } else {
                problem(line, "\(fullKey) must be a number of pages from 1 to 10000, not \"\(value)\"")
            }
        case "preview" where kind == .export:
            if let b = Self.bool(value) { sharing.preview = b } else { problem(line, "\(fullKey) must be yes or no, not \"\(value)\"") }
        case "min-free" where kind == .export:
            if let size = Self.size(value) { sharing.minFree = Int64(size) } else {
                problem(line, "\(fullKey) must be a size such as 64M or 1G (0 for no check), not \"\(value)\"")
            }
        case "title":
            if value.isEmpty { sharing.title = nil } else {
                do { sharing.title = try NameTemplate(parsing: value) } catch { problem(line, "\(fullKey): \(error.text)") }
            }
        case "name":
            do {
                let template = try NameTemplate(parsing: value)
                if template.pieces.isEmpty { problem(line, "\(fullKey) must not be empty") } else { sharing.name = template }
            } catch { problem(line, "\(fullKey): \(error.text)") }
        case "to" where kind == .export:
            sharing.exportFolder = resolvePath(value, line: line, key: fullKey) ?? ""
        case "collision" where kind == .export:
            if let c = CollisionPolicy(rawValue: value.lowercased()) { sharing.collision = c } else {
                problem(line, "\(fullKey) must be rename, replace or fail, not \"\(value)\"")
            }
        case "printer" where kind == .print:
            sharing.printer = value.isEmpty ? nil : value
            if value.contains(where: { $0 == "/" || $0 == "#" || $0.isWhitespace }) {
                problem(line, "\(fullKey): \"\(value)\" is not a CUPS queue name (no spaces, / or #)")
            }
        case "copies" where kind == .print:
            if let n = Int(value), (1...999).contains(n) { sharing.copies = n } else {
                problem(line, "\(fullKey) must be a number from 1 to 999, not \"\(value)\"")
            }
        case "sides" where kind == .print:
            let allowed = SharingConfiguration.sidesValues
            var list: [String] = []
            for word in Self.patterns(value) {
                if allowed.contains(word) {
                    if !list.contains(word) { list.append(word) }
                } else {
                    problem(line, "\(fullKey) must be one of \(allowed.joined(separator: ", ")) (or a list of them), not \"\(word)\"\(Spelling.suggestion(for: word, among: allowed))")
                }
            }
            sharing.sidesOptions = list
        case "max-copies" where kind == .print:
            if let n = Int(value), (1...999).contains(n) { sharing.maxCopies = n } else {
                problem(line, "\(fullKey) must be a number from 1 to 999, not \"\(value)\"")
            }
        case "media" where kind == .print:
            if value.isEmpty || value.contains(where: { $0.isWhitespace || $0 == "," }) {
                problem(line, "\(fullKey) must be a media name such as A4, Letter or iso_a4_210x297mm, not \"\(value)\"")
            } else {
                sharing.media = value
            }
        case "color" where kind == .print:
            let allowed = ["color", "monochrome", "auto"]
            if allowed.contains(value.lowercased()) { sharing.color = value.lowercased() } else {
                problem(line, "\(fullKey) must be color, monochrome or auto, not \"\(value)\"")
            }
        case "orientation" where kind == .print:
            let allowed = ["portrait", "landscape", "reverse-portrait", "reverse-landscape"]
            if allowed.contains(value.lowercased()) { sharing.orientation = value.lowercased() } else {
                problem(line, "\(fullKey) must be one of \(allowed.joined(separator: ", ")), not \"\(value)\"")
            }
        case "options" where kind == .print:
            switch Self.printOptions(value) {
            case .success(let o): sharing.options = o
            case .failure(let m): problem(line, "\(fullKey): \(m.text)")
            }
        case "timeout" where kind == .print:
            if let d = Self.duration(value), d > 0 { sharing.timeout = d } else {
                problem(line, "\(fullKey) must be a duration such as 10m or 1h, not \"\(value)\"")
            }
        default:
            let candidates = (Self.sharingKeys + (kind == .export ? Self.exportKeys : Self.printKeys)).map { "\(kind.rawValue).\($0)" }
            problem(line, "unknown key \(fullKey)\(Spelling.suggestion(for: fullKey, among: candidates))")
        }
    }

    mutating func enumList<E: RawRepresentable & CaseIterable & Equatable>(_ value: String, _ type: E.Type, key: String, line: Int) -> [E]? where E.RawValue == String {
        var list: [E] = []
        let names = E.allCases.map(\.rawValue)
        for raw in value.split(separator: ",") {
            let word = raw.trimmingCharacters(in: .whitespaces).lowercased()
            guard let option = E(rawValue: word) else {
                problem(line, "\(key): unknown option \"\(word)\"; allowed: \(names.joined(separator: ", "))\(Spelling.suggestion(for: word, among: names))")
                return nil
            }
            if !list.contains(option) { list.append(option) }
        }
        if list.isEmpty {
            problem(line, "\(key) needs at least one of \(names.joined(separator: ", "))")
            return nil
        }
        return list
    }

    mutating func resolvePath(_ value: String, line: Int, key: String) -> String? {
        guard !value.isEmpty else {
            problem(line, "\(key) is empty: give a folder")
            return nil
        }
        var path = value
        if path.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] {
            path = home + path.dropFirst()
        }
        if !path.hasPrefix("/") {
            // Relative to the configuration file, never to wherever the service
            // happened to be started.
            path = baseDirectory + "/" + path
        }
        return Self.normalize(path)
    }

    // MARK: - relations between folders

    mutating func checkFolderRelations(_ folders: [FolderConfiguration]) {
        for (i, a) in folders.enumerated() {
            guard !a.path.isEmpty else { continue }
            for b in folders[(i + 1)...] where !b.path.isEmpty && Self.same(a.path, b.path) {
                problem(b.line, "folders \(a.name) and \(b.name) both watch \(a.path)")
            }
            for b in folders {
                var outputs: [(String, String)] = [("done", b.doneFolder), ("failed", b.failedFolder)]
                if let e = b.export { outputs.append(("export", e.exportFolder)) }
                for (what, out) in outputs where !out.isEmpty {
                    if a.name == b.name {
                        // A folder's own done/failed/export folders inside its drop folder are
                        // fine (the watcher skips them) unless they are the drop folder itself.
                        if Self.same(out, a.path) {
                            problem(a.line, "folder \(a.name): its \(what) folder is the drop folder itself; every result would be processed again")
                        } else if Self.contains(out, a.path) {
                            problem(a.line, "folder \(a.name): the drop folder \(a.path) is inside its own \(what) folder \(out); that is a reprocessing loop")
                        }
                        continue
                    }
                    if Self.contains(out, a.path) || Self.same(out, a.path) {
                        problem(a.line, "folder \(a.name) watches \(a.path), which is inside the \(what) folder of \(b.name) (\(out)); that is a reprocessing loop")
                    } else if Self.contains(a.path, out) {
                        problem(a.line, "the \(what) folder of \(b.name) (\(out)) is inside the drop folder of \(a.name) (\(a.path)); that is a reprocessing loop")
                    }
                }
            }
        }
    }

    // MARK: - value parsers

    static func bool(_ s: String) -> Bool? {
        switch s.lowercased() {
        case "yes", "true", "on", "1": true
        case "no", "false", "off", "0": false
        default: nil
        }
    }

    /// `1s`, `1.5s`, `500ms`, `2m`, `1h`, or a plain number of seconds.
    public static func duration(_ s: String) -> Double? {
        let t = s.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, factor) in units where t.hasSuffix(suffix) {
            let number = t.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)
            // "ms" ends in "s": only accept the unit whose prefix is a number.
            if let v = Double(number), v >= 0, v * factor <= maxDuration { return v * factor }
        }
        if let v = Double(t), v >= 0, v <= maxDuration { return v }
        return nil
    }

    /// The longest duration the service can wait (a DispatchTime's nanoseconds,
    /// about 292 years); longer ones, such as 1e300h, would trap when printed.
    static let maxDuration = Double(Int64.max) / 1e9

    /// `512M`, `2G`, `1024K`, or plain bytes.
    public static func size(_ s: String) -> Int? {
        let t = s.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [(String, Double)] = [("K", 1024), ("M", 1_048_576), ("G", 1_073_741_824), ("T", 1_099_511_627_776)]
        for (suffix, factor) in units {
            for spelled in [suffix + "IB", suffix + "B", suffix] where t.hasSuffix(spelled) {
                if let v = Double(t.dropLast(spelled.count).trimmingCharacters(in: .whitespaces)), v >= 0, v.isFinite, v * factor < 9e18 {
                    return Int(v * factor)
                }
            }
        }
        if let v = Int(t.hasSuffix("B") ? String(t.dropLast()) : t), v >= 0 { return v }
        return nil
    }

    static func patterns(_ s: String) -> [String] {
        s.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `key=value key2="value with spaces"`, passed to CUPS as options.
    static func printOptions(_ s: String) -> Result<[PrintOption], ConfigurationMessage> {
        var result: [PrintOption] = []
        var i = s.startIndex
        func skipSpaces() { while i < s.endIndex, s[i].isWhitespace { i = s.index(after: i) } }
        skipSpaces()
        while i < s.endIndex {
            var name = ""
            while i < s.endIndex, s[i] != "=", !s[i].isWhitespace { name.append(s[i]); i = s.index(after: i) }
            guard i < s.endIndex, s[i] == "=", !name.isEmpty else {
                return .failure(ConfigurationMessage("expected key=value, found \"\(name)\""))
            }
            i = s.index(after: i)
            var value = ""
            if i < s.endIndex, s[i] == "\"" || s[i] == "'" {
                let quote = s[i]
                i = s.index(after: i)
                while i < s.endIndex, s[i] != quote { value.append(s[i]); i = s.index(after: i) }
                guard i < s.endIndex else { return .failure(ConfigurationMessage("unclosed quote in the value of \(name)")) }
                i = s.index(after: i)
            } else {
                while i < s.endIndex, !s[i].isWhitespace { value.append(s[i]); i = s.index(after: i) }
            }
            guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                return .failure(ConfigurationMessage("\"\(name)\" is not a CUPS option name"))
            }
            result.append(PrintOption(name: name, value: value))
            skipSpaces()
        }
        return .success(result)
    }

    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for component in path.split(separator: "/") {
            if component == "." { continue }
            if component == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(component)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The real path, so two spellings of one folder compare equal; a part
    /// that does not exist yet (a done/ folder made at first use) is kept as
    /// written after its resolved parent.
    static func canonical(_ path: String) -> String {
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        let parent = (path as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != path else { return path }
        return (canonical(parent) as NSString).appendingPathComponent((path as NSString).lastPathComponent)
    }

    static func same(_ a: String, _ b: String) -> Bool { canonical(a) == canonical(b) }

    /// Whether `inner` lies strictly inside `outer`.
    static func contains(_ outer: String, _ inner: String) -> Bool {
        let o = canonical(outer), i = canonical(inner)
        return i.hasPrefix(o.hasSuffix("/") ? o : o + "/")
    }
}

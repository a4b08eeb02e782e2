import Foundation
import Glibc
import XCTest
@testable import HotFolderKit

// Helpers of the reliability, fault-injection and hostile-input tests. Every
// name starts with RL so nothing clashes with the other test files.

// MARK: - seeded randomness

/// The job ids' SplitMix64, seeded, so a failing random schedule can be
/// replayed (the seed is printed; HOTFOLDER_RL_SEED=N replays it).
struct RLRandom: RandomNumberGenerator {
    private var generator: SplitMix64
    let seed: UInt64

    init(seed: UInt64) {
        self.seed = seed
        generator = SplitMix64(seed: seed)
    }

    /// The seed from HOTFOLDER_RL_SEED, else a fresh one; printed either way.
    static func forTest(_ name: String) -> RLRandom {
        let fromEnvironment = ProcessInfo.processInfo.environment["HOTFOLDER_RL_SEED"].flatMap { UInt64($0) }
        let seed = fromEnvironment ?? UInt64.random(in: 1...UInt64(Int32.max))
        print("[\(name)] random seed \(seed) (replay with HOTFOLDER_RL_SEED=\(seed))")
        return RLRandom(seed: seed)
    }

    mutating func next() -> UInt64 { generator.next() }
}

// MARK: - processes

/// How a process ended.
enum RLExit: Equatable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)
    /// Someone else reaped it (should not happen).
    case unknown

    init(waitStatus status: Int32) {
        let signal = status & 0x7F
        if signal == 0 {
            self = .exited((status >> 8) & 0xFF)
        } else if signal != 0x7F {
            self = .signaled(signal)
        } else {
            self = .unknown
        }
    }

    var description: String {
        switch self {
        case .exited(let code): "exit status \(code)"
        case .signaled(let signal): "signal \(signal) (\(String(cString: strsignal(signal))))"
        case .unknown: "unknown end"
        }
    }
}

/// A child started with posix_spawn in a process group of its own, so that its
/// own children (the service's `hotfolder worker` processes) can be found and,
/// when the test ends, ended with it. Output (both streams) is appended to a log.
final class RLProcess {
    let pid: pid_t
    private(set) var exit: RLExit?

    init(executable: String, arguments: [String], environment: [String: String] = [:], log: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGHUP, SIGTERM, SIGINT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw RLError("posix_spawn \(executable): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// Reaps the process if it has ended (never blocks).
    @discardableResult
    func poll() -> RLExit? {
        if let exit { return exit }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid {
            exit = RLExit(waitStatus: status)
        } else if r < 0 && errno == ECHILD {
            exit = .unknown
        }
        return exit
    }

    var isRunning: Bool { poll() == nil }

    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits (polling) until the process ends; nil when `timeout` passed first.
    func waitForExit(timeout: Double) -> RLExit? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let exit = poll() { return exit }
            usleep(5_000)
        }
        return poll()
    }

    /// Live (not zombie) members of the process group, the leader included
    /// while it runs: the service and its worker processes.
    var groupMembers: [pid_t] { RLProcess.liveMembers(ofGroup: pid) }

    static func liveMembers(ofGroup group: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var members: [pid_t] = []
        for entry in entries {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.range(of: ") ", options: .backwards) else { continue }
            let fields = stat[close.upperBound...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", fields[0] != "X", pid_t(fields[2]) == group else { continue }
            members.append(pid)
        }
        return members.sorted()
    }

    /// The command line of a process (arguments joined by spaces).
    static func commandLine(_ pid: pid_t) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return "" }
        return String(decoding: data, as: UTF8.self).split(separator: "\0").joined(separator: " ")
    }

    /// SIGKILL to the whole group, then reaps the leader.
    func killGroup() {
        kill(-pid, SIGKILL)
        if isRunning { kill(pid, SIGKILL) }
        _ = waitForExit(timeout: 10)
    }

    deinit {
        if isRunning || !groupMembers.isEmpty { killGroup() }
    }
}

struct RLError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - a real `hotfolder run`

/// One temporary tree with a configuration file, and the `hotfolder run`
/// process over it, which the tests kill, stop and restart.
final class RLService {
    let executable: String
    let root: TemporaryFolder
    let configPath: String
    let logPath: String
    var environment: [String: String]
    private(set) var process: RLProcess?
    private(set) var starts = 0
    /// Worker processes that outlived a SIGKILLed service for longer than the
    /// grace period and had to be killed (pids).
    private(set) var lingeringWorkers: [pid_t] = []

    /// - Parameter root: a tree shared with another service (several
    ///   instances on one folder); by default a new temporary one.
    init(_ name: String, config: String, in root: TemporaryFolder? = nil, environment: [String: String] = [:]) throws {
        executable = try HotfolderExecutable.require()
        self.root = root ?? TemporaryFolder("hf-rl-\(name)")
        configPath = self.root.path + "/\(name).conf"
        logPath = self.root.path + "/\(name).log"
        self.environment = environment
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    func path(_ relative: String) -> String { root.path + "/" + relative }

    func rewriteConfig(_ text: String) throws {
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    func start() throws {
        precondition(process?.isRunning != true, "already running")
        starts += 1
        let marker = "\n===== test: start #\(starts) =====\n"
        if let handle = FileHandle(forWritingAtPath: logPath) {
            handle.seekToEndOfFile()
            handle.write(Data(marker.utf8))
            try? handle.close()
        } else {
            try marker.write(toFile: logPath, atomically: false, encoding: .utf8)
        }
        process = try RLProcess(executable: executable, arguments: ["run", "--config", configPath], environment: environment, log: logPath)
    }

    var isRunning: Bool { process?.isRunning == true }
    var pid: pid_t? { process?.pid }
    var log: String { readText(logPath) }

    /// The log of the current (latest) start only.
    var currentLog: String {
        let text = log
        guard let r = text.range(of: "===== test: start #\(starts) =====", options: .backwards) else { return text }
        return String(text[r.upperBound...])
    }

    func count(_ needle: String, inCurrentRunOnly: Bool = false) -> Int {
        (inCurrentRunOnly ? currentLog : log).components(separatedBy: needle).count - 1
    }

    /// Waits until the current run has opened `folders` folders (its signal
    /// handlers are installed by then).
    func waitUntilWatching(folders: Int = 1, timeout: Double = 30, file: StaticString = #filePath, line: UInt = #line) {
        waitUntil(timeout: timeout, "the service to watch its folders", file: file, line: line) {
            count("watching ", inCurrentRunOnly: true) >= folders || !isRunning
        }
        XCTAssertTrue(isRunning, "the service died at start (\(process?.exit?.description ?? "?")):\n\(currentLog.suffix(3000))", file: file, line: line)
    }

    /// SIGKILL of the service alone, as a crash or the OOM killer would do it.
    /// Its worker processes lose their stdin and must exit by themselves; any
    /// that is still there after `grace` seconds is recorded and killed, so no
    /// process leaks and no orphan writes into a job the next run resumes.
    func kill9(grace: Double = 10) {
        guard let process else { return }
        let group = process.pid
        kill(group, SIGKILL)
        let exit = process.waitForExit(timeout: 10)
        precondition(exit != nil, "a SIGKILLed process did not end")
        let deadline = Date().addingTimeInterval(grace)
        while !RLProcess.liveMembers(ofGroup: group).isEmpty && Date() < deadline { usleep(10_000) }
        let survivors = RLProcess.liveMembers(ofGroup: group)
        if !survivors.isEmpty {
            lingeringWorkers += survivors
            kill(-group, SIGKILL)
            let end = Date().addingTimeInterval(10)
            while !RLProcess.liveMembers(ofGroup: group).isEmpty && Date() < end { usleep(10_000) }
        }
    }

    /// SIGTERM, then the exit and how long it took (nil exit: still running
    /// after `timeout`, and then killed).
    func terminate(timeout: Double = 60) -> (exit: RLExit?, seconds: Double) {
        guard let process, process.isRunning else { return (self.process?.exit, 0) }
        let began = Date()
        kill(process.pid, SIGTERM)
        let exit = process.waitForExit(timeout: timeout)
        let seconds = Date().timeIntervalSince(began)
        if exit == nil { process.killGroup() }
        return (exit, seconds)
    }

    func hangup() { process?.signal(SIGHUP) }

    /// The live `hotfolder worker` processes of the current run.
    var workers: [pid_t] {
        guard let process else { return [] }
        return process.groupMembers.filter { $0 != process.pid }
    }

    /// Ends everything (used when a test returns early).
    func shutdown() {
        if let process { process.killGroup() }
    }

    deinit { shutdown() }
}

// MARK: - configuration

/// A configuration for `hotfolder run` over one folder `f` (path drop/, settle
/// 0, worker processes); `service` and `folder` add or override keys.
func rlConfig(service: [String: String] = [:], folder: [String: String]) -> String {
    var serviceKeys = ["instance": "rl", "workers": "2", "generation": "workers", "log-level": "info", "shutdown-timeout": "20s"]
    serviceKeys.merge(service) { $1 }
    var folderKeys = ["path": "drop", "settle": "0"]
    folderKeys.merge(folder) { $1 }
    let lines = { (keys: [String: String]) in keys.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: "\n") }
    return "[service]\n" + lines(serviceKeys) + "\n\n[folder f]\n" + lines(folderKeys) + "\n"
}

/// Watches an invariant for `seconds` (an observation window for something
/// that must NOT happen, e.g. a waiting document being failed); fails at the
/// first violation.
func rlHolds(for seconds: Double, _ what: String, file: StaticString = #filePath, line: UInt = #line, _ invariant: () -> Bool) {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        guard invariant() else {
            XCTFail("violated: \(what)", file: file, line: line)
            return
        }
        usleep(20_000)
    }
}

/// rm -rf, repeated while the running service creates entries in the tree
/// (its service area, done/) under our feet.
func rlRemoveTree(_ path: String) throws {
    for _ in 0..<20 {
        _ = try runProcess("/bin/rm", ["-rf", path])
        if access(path, F_OK) != 0 { return }
    }
    throw RLError("cannot remove \(path)")
}

// MARK: - folders

/// The layout the tests use under an RLService's root: drop/, out/, staging/.
struct RLFolders {
    let root: String
    var drop: String { root + "/drop" }
    var out: String { root + "/out" }
    var done: String { drop + "/done" }
    var failed: String { drop + "/failed" }
    var staging: String { root + "/staging" }

    init(root: String) {
        self.root = root
        for p in [drop, staging] { try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true) }
    }

    /// An instance's folder in the drop folder's service area (jobs/, journal).
    func instance(_ instance: String) -> String { drop + "/.hotfolder/\(instance)" }
    func jobs(instance: String) -> String { self.instance(instance) + "/jobs" }

    /// Puts a file into the drop folder whole (written beside it, then renamed
    /// in), as a careful uploader does: no reader ever sees it half written.
    func drop(_ name: String, _ bytes: [UInt8], into folder: String? = nil) {
        let staged = staging + "/" + name
        writeFile(staged, bytes)
        let target = (folder ?? drop) + "/" + name
        precondition(rename(staged, target) == 0, "rename into \(target): \(String(cString: strerror(errno)))")
    }

    /// Documents in done/ (names as they are there).
    var doneNames: [String] { files(in: done) }
    /// Documents in failed/, without their error files.
    var failedNames: [String] { files(in: failed).filter { !$0.hasSuffix(".error.txt") } }
    var errorFiles: [String] { files(in: failed).filter { $0.hasSuffix(".error.txt") } }

    /// Regular files still lying in the drop folder itself (hidden ones, and
    /// names that are not valid UTF-8, too).
    var leftInDrop: [String] { rlRawFiles(in: drop) }

    /// The jobs (ids) an instance still has in its `jobs/`.
    func jobFolders(instance: String) -> [String] { jobIDs(in: jobs(instance: instance)) }

    /// Every job of every instance that still has files in its `jobs/`, as `instance/id`.
    var allJobFolders: [String] {
        allEntries(in: drop + "/.hotfolder").flatMap { instance in
            jobIDs(in: jobs(instance: instance)).map { "\(instance)/\($0)" }
        }
    }

    /// What the instance's journal says of a job, for failure messages.
    func journal(of job: String, instance: String) -> String {
        journalRecords(at: self.instance(instance) + "/" + JournalFile.fileName).filter { $0.job == job }
            .map { "\($0.record.event.rawValue)\($0.record.name.map { " " + $0 } ?? "")" }.joined(separator: ", ")
    }

    /// The error files' texts, for failure messages.
    func errorReport(limit: Int = 10) -> String {
        errorFiles.prefix(limit).map { name in "--- \(name)\n" + readText(failed + "/" + name) }.joined(separator: "\n")
    }
}

/// The regular files of a folder by readdir(3), so that a name that is not
/// valid UTF-8 is listed too (shown with U+FFFD).
func rlRawFiles(in path: String) -> [String] {
    guard let dir = opendir(path) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
        let name = String(decoding: raw, as: UTF8.self)
        var st = stat()
        let full = Array(path.utf8) + [UInt8(ascii: "/")] + raw + [0]
        let isFile = full.withUnsafeBufferPointer { p in p.withMemoryRebound(to: CChar.self) { lstat($0.baseAddress!, &st) == 0 } }
            && (st.st_mode & S_IFMT) == S_IFREG
        if isFile { names.append(name) }
    }
    return names.sorted()
}

/// A small one-page PDF whose /Title is `title` (and so whose export is named
/// after it with export.name = {title}).
func rlPDF(title: String, pages: Int = 1) -> [UInt8] {
    var pdf = TestPDF(pages: pages, title: title)
    pdf.trailerComment = "rl \(title)"
    return pdf.bytes
}

/// Opens a PDF with libqpdf (the service's engine): pages and title.
func rlOpen(_ path: String) throws -> (pages: Int, title: String?) {
    let document = try openPDF(path)
    let info = try document.info()
    return (info.pages, try document.title())
}

/// "name (2).pdf" and the like: a second copy made by a collision rename.
func rlIsNumberedCopy(_ name: String) -> Bool {
    name.range(of: #" \(\d+\)(\.[^.]*)?$"#, options: .regularExpression) != nil
}

// MARK: - CUPS captures

/// The jobs the capture backend of a CUPSSandbox stored for `queue`:
/// job id and the CUPS job name (`title`, "<name> [<job id>]").
func rlCaptures(_ sandbox: CUPSSandbox, queue: String) -> [(job: Int, title: String, bytes: Int)] {
    let folder = "\(sandbox.dir)/printed/\(queue)"
    return allEntries(in: folder).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.compactMap { name in
        guard let data = FileManager.default.contents(atPath: folder + "/" + name),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let title = object["title"] as? String else { return nil }
        return ((object["job_id"] as? Int) ?? -1, title, (object["bytes"] as? Int) ?? -1)
    }
}

/// The configured name part of a CUPS job name "<name> [<job id>]".
func rlPrintedName(_ title: String) -> String {
    guard let r = title.range(of: " [", options: .backwards) else { return title }
    return String(title[..<r.lowerBound])
}

// MARK: - deflate by hand (decompression bombs)

/// A deflate encoder with the fixed Huffman code: enough to write
/// decompression bombs (long runs of matches) without zlib in the tests.
struct RLBitWriter {
    private(set) var bytes: [UInt8] = []
    private var accumulator: UInt64 = 0
    private var count = 0

    var isAligned: Bool { count == 0 }

    /// `n` bits of `value`, least significant first (header fields, extra bits).
    mutating func bits(_ value: UInt32, _ n: Int) {
        accumulator |= UInt64(value) << UInt64(count)
        count += n
        while count >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: accumulator))
            accumulator >>= 8
            count -= 8
        }
    }

    /// A Huffman code of `n` bits, most significant first.
    mutating func code(_ value: UInt32, _ n: Int) {
        var reversed: UInt32 = 0
        for i in 0..<n where value & (1 << UInt32(i)) != 0 { reversed |= 1 << UInt32(n - 1 - i) }
        bits(reversed, n)
    }

    mutating func append(aligned more: [UInt8]) {
        precondition(isAligned)
        bytes.append(contentsOf: more)
    }

    mutating func finish() {
        if count > 0 { bytes.append(UInt8(truncatingIfNeeded: accumulator)) }
        accumulator = 0
        count = 0
    }

    /// Literal/length symbol 0...287 of the fixed code.
    mutating func symbol(_ s: Int) {
        switch s {
        case 0...143: code(UInt32(0x30 + s), 8)
        case 144...255: code(UInt32(0x190 + s - 144), 9)
        case 256...279: code(UInt32(s - 256), 7)
        default: code(UInt32(0xC0 + s - 280), 8)
        }
    }

    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// A back-reference: `length` 3...258 bytes from `distance` 1...32768 back.
    mutating func match(length: Int, distance: Int) {
        precondition((3...258).contains(length) && (1...32768).contains(distance))
        let l = length == 258 ? 28 : (Self.lengthBase.lastIndex { $0 <= length } ?? 0)
        symbol(257 + l)
        if Self.lengthExtra[l] > 0 { bits(UInt32(length - Self.lengthBase[l]), Self.lengthExtra[l]) }
        let d = Self.distanceBase.lastIndex { $0 <= distance } ?? 0
        code(UInt32(d), 5)
        if Self.distanceExtra[d] > 0 { bits(UInt32(distance - Self.distanceBase[d]), Self.distanceExtra[d]) }
    }
}

enum RLDeflate {
    static func adler32(_ bytes: [UInt8], start: (a: UInt64, b: UInt64) = (1, 0)) -> (a: UInt64, b: UInt64) {
        var a = start.a
        var b = start.b
        bytes.withUnsafeBufferPointer { buffer in
            var i = 0
            while i < buffer.count {
                let end = min(i + 5552, buffer.count)
                while i < end {
                    a += UInt64(buffer[i])
                    b += a
                    i += 1
                }
                a %= 65521
                b %= 65521
            }
        }
        return (a, b)
    }

    static func zlibWrap(_ deflate: [UInt8], adler: (a: UInt64, b: UInt64)) -> [UInt8] {
        let value = UInt32(truncatingIfNeeded: (adler.b << 16) | adler.a)
        return [0x78, 0x01] + deflate + [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// zlib data that inflates to `head` followed by `zeros` zero bytes, at
    /// about 1:160 (8 matches of 258 bytes fill exactly 13 bytes, repeated).
    static func zlib(head: [UInt8], zeros: Int) -> [UInt8] {
        precondition(zeros >= 1)
        var w = RLBitWriter()
        w.bits(1, 1) // last block
        w.bits(1, 2) // fixed Huffman codes
        for byte in head { w.symbol(Int(byte)) }
        w.symbol(0)
        var left = zeros - 1
        while left >= 258 && !w.isAligned {
            w.match(length: 258, distance: 1)
            left -= 258
        }
        if w.isAligned && left >= 258 * 8 {
            var block = RLBitWriter()
            for _ in 0..<8 { block.match(length: 258, distance: 1) }
            precondition(block.isAligned && block.bytes.count == 13)
            let repeats = left / (258 * 8)
            var run = [UInt8]()
            run.reserveCapacity(repeats * 13)
            for _ in 0..<repeats { run.append(contentsOf: block.bytes) }
            w.append(aligned: run)
            left -= repeats * 258 * 8
        }
        while left >= 258 {
            w.match(length: 258, distance: 1)
            left -= 258
        }
        if left >= 3 {
            w.match(length: left, distance: 1)
            left = 0
        }
        for _ in 0..<left { w.symbol(0) }
        w.symbol(256)
        w.finish()
        var adler = adler32(head)
        adler.b = (adler.b + adler.a * UInt64(zeros % 65521)) % 65521
        return zlibWrap(w.bytes, adler: adler)
    }

    /// zlib data of arbitrary `data`, compressed only by repeats at the given
    /// distances (enough for data made by `zlib(head:zeros:)`, which repeats
    /// every 13 bytes).
    static func zlib(_ data: [UInt8], distances: [Int] = [13, 1]) -> [UInt8] {
        var w = RLBitWriter()
        w.bits(1, 1)
        w.bits(1, 2)
        data.withUnsafeBufferPointer { p in
            var i = 0
            while i < p.count {
                var best = 0
                var bestDistance = 0
                for d in distances where d <= i {
                    var n = 0
                    while n < 258 && i + n < p.count && p[i + n] == p[i + n - d] { n += 1 }
                    if n > best {
                        best = n
                        bestDistance = d
                    }
                }
                if best >= 3 {
                    w.match(length: best, distance: bestDistance)
                    i += best
                } else {
                    w.symbol(Int(p[i]))
                    i += 1
                }
            }
        }
        w.symbol(256)
        w.finish()
        return zlibWrap(w.bytes, adler: adler32(data))
    }
}

/// PDFs that make the PDF engine work far beyond what their size suggests.
enum RLBomb {
    /// A one-page PDF whose content stream is `megabytes` MB of zeros,
    /// compressed twice (/Filter [/FlateDecode /FlateDecode]): qpdf rewrites
    /// (inflates and deflates again) such a stream when it writes the output.
    /// 1024 MB keeps qpdf busy for several seconds; the file is ~50 KB.
    static func slow(megabytes: Int) -> [UInt8] {
        let inner = RLDeflate.zlib(head: [], zeros: megabytes << 20)
        let outer = RLDeflate.zlib(inner)
        var objects: [[UInt8]] = []
        objects.append(Array("<< /Type /Catalog /Pages 2 0 R >>".utf8))
        objects.append(Array("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8))
        objects.append(Array("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>".utf8))
        objects.append(Array("<< /Length \(outer.count) /Filter [/FlateDecode /FlateDecode] >>\nstream\n".utf8) + outer + Array("\nendstream".utf8))
        var out = Array("%PDF-1.7\n".utf8)
        var offsets: [Int] = []
        for (i, body) in objects.enumerated() {
            offsets.append(out.count)
            out += Array("\(i + 1) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
        }
        let xref = out.count
        var table = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { table += String(format: "%010d 00000 n \n", offset) }
        table += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return out + Array(table.utf8)
    }

    /// A one-page PDF whose page object lies in an object stream that inflates
    /// to `megabytes` MB: qpdf must hold all of it in memory to read the page.
    static func memory(megabytes: Int) -> [UInt8] {
        let head = Array("3 0 ".utf8)
        let page = Array("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>".utf8)
        let inner = RLDeflate.zlib(head: head + page, zeros: megabytes << 20)
        let outer = RLDeflate.zlib(inner)
        var out = Array("%PDF-1.7\n%\u{00E2}\u{00E3}\n".utf8)
        var offsets: [Int: Int] = [:]
        func add(_ number: Int, _ body: [UInt8]) {
            offsets[number] = out.count
            out += Array("\(number) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
        }
        add(1, Array("<< /Type /Catalog /Pages 2 0 R >>".utf8))
        add(2, Array("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8))
        add(4, Array("<< /Type /ObjStm /N 1 /First \(head.count) /Length \(outer.count) /Filter [/FlateDecode /FlateDecode] >>\nstream\n".utf8)
            + outer + Array("\nendstream".utf8))
        let xref = out.count
        func row(_ type: UInt8, _ field: Int, _ generation: Int) -> [UInt8] {
            [type, UInt8((field >> 24) & 0xFF), UInt8((field >> 16) & 0xFF), UInt8((field >> 8) & 0xFF), UInt8(field & 0xFF),
             UInt8((generation >> 8) & 0xFF), UInt8(generation & 0xFF)]
        }
        var rows: [UInt8] = row(0, 0, 65535)
        rows += row(1, offsets[1]!, 0)
        rows += row(1, offsets[2]!, 0)
        rows += row(2, 4, 0) // object 3: index 0 of object stream 4
        rows += row(1, offsets[4]!, 0)
        rows += row(1, xref, 0)
        out += Array("5 0 obj\n<< /Type /XRef /W [1 4 2] /Size 6 /Root 1 0 R /Length \(rows.count) >>\nstream\n".utf8)
        out += rows + Array("\nendstream\nendobj\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }
}

import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

// MARK: - files

func readBytes(_ path: String) -> [UInt8] {
    (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
}

func readText(_ path: String) -> String {
    String(decoding: readBytes(path), as: UTF8.self)
}

func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

/// Every entry of a folder, hidden ones included.
func allEntries(in path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
}

/// Regular files only (no folders), hidden ones included.
func regularFiles(in path: String) -> [String] {
    allEntries(in: path).filter { name in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}

/// Writes bytes like `cp` does: create, write, close (no rename).
func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    precondition(fd >= 0, "cannot create \(path): \(String(cString: strerror(errno)))")
    var written = 0
    while written < bytes.count {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
        precondition(n > 0, "cannot write \(path)")
        written += n
    }
    close(fd)
}

func writeFile(_ path: String, _ text: String) { writeFile(path, Array(text.utf8)) }

/// The instance name the test services use (`instance =` in [service]).
let testInstance = "test"

/// The jobs of the test instance still in a drop folder's service area (their
/// ids; a job is `<id> <name>` and `<id>.<file>` in a shard `jobs/0`…`jobs/f`).
func jobFolders(of drop: String) -> [String] {
    jobIDs(in: jobsPath(of: drop))
}

/// The job ids that the files in a `jobs/` folder's shards belong to (and
/// job folders of the earlier layout, `jobs/<id>/`), sorted.
func jobIDs(in jobs: String) -> [String] {
    var ids = Set<String>()
    for entry in allEntries(in: jobs) {
        guard entry.count == 1 else {
            ids.insert(entry)
            continue
        }
        for name in allEntries(in: jobs + "/" + entry) {
            ids.insert(String(name.prefix { $0 != " " && $0 != "." }))
        }
    }
    return ids.sorted()
}

func jobsPath(of drop: String) -> String { instancePath(of: drop) + "/jobs" }

/// The test instance's folder in a drop folder's service area (jobs/, journal).
func instancePath(of drop: String) -> String { drop + "/.hotfolder/\(testInstance)" }

/// The records of a journal file on disk, with their jobs' ids.
func journalRecords(at path: String) -> [(job: String, record: JournalRecord)] {
    JournalFile.records(in: readBytes(path))
}

/// Delivers an export like the service does: staged under temporary names,
/// synced, placed.
func deliverExport(_ destination: ExportDestination, _ output: StagedOutput, job: JobFolder,
                   values: [NameTemplate.Placeholder: String]) throws -> [String] {
    if case .delivered(let names, _) = try destination.deliver(output, job: job, values: values) { return names }
    try job.journal.file?.flush(sync: false)
    sync() // what the service's SyncBatcher does with syncfs
    job.exportsDurable(job.exportsStaged)
    guard case .delivered(let names, _) = try destination.deliver(output, job: job, values: values) else {
        XCTFail("the export was not placed after its sync")
        return []
    }
    return names
}

// MARK: - PDFs

/// Opens a PDF with the engine the service uses.
func openPDF(_ path: String, password: String? = nil) throws -> PDFDocument {
    let url = URL(fileURLWithPath: path)
    let directory = try Directory(path: url.deletingLastPathComponent().path)
    let fd = try directory.openForReading(url.lastPathComponent)
    return try PDFDocument.open(fd, description: url.lastPathComponent, password: password)
}

/// Pages, annotations (not counting links and popups) and title of a PDF.
struct PDFSummary: Equatable {
    var pages: Int
    var annotations: Int
    var perPage: [Int]
    var title: String?
    var encrypted: Bool
    var hasForm: Bool
}

func summarize(_ path: String, password: String? = nil) throws -> PDFSummary {
    let document = try openPDF(path, password: password)
    let info = try document.info()
    var perPage: [Int] = []
    for page in 0..<info.pages { perPage.append(try document.annotationCount(page: page)) }
    return PDFSummary(pages: info.pages, annotations: info.annotations, perPage: perPage, title: try document.title(),
                      encrypted: info.encrypted, hasForm: info.hasForm)
}

// MARK: - configuration

/// Parses a configuration written in a temporary folder (relative paths in it
/// resolve against that folder), failing the test with every problem if any.
func configuration(_ text: String, in folder: TemporaryFolder, file: StaticString = #filePath, line: UInt = #line) throws -> ServiceConfiguration {
    let path = folder.path + "/hotfolders.conf"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    do {
        return try ServiceConfiguration.parse(text: text, file: path)
    } catch {
        XCTFail("configuration rejected:\n\(error.description)", file: file, line: line)
        throw error
    }
}

// MARK: - service

/// Collects what a running service reports, from any thread.
final class Recorder: HotFolderDelegate, Sendable {
    private let state = Mutex<(outcomes: [JobOutcome], logs: [LogEntry])>(([], []))

    func hotFolder(log entry: LogEntry) { state.withLock { $0.logs.append(entry) } }
    func hotFolder(finished outcome: JobOutcome) { state.withLock { $0.outcomes.append(outcome) } }

    var outcomes: [JobOutcome] { state.withLock { $0.outcomes } }
    var logs: [LogEntry] { state.withLock { $0.logs } }
    var succeeded: [JobOutcome] { outcomes.filter(\.succeeded) }
    var failed: [JobOutcome] { outcomes.filter { !$0.succeeded } }

    func outcomes(for original: String) -> [JobOutcome] { outcomes.filter { $0.original == original } }

    var logText: String { logs.map(\.description).joined(separator: "\n") }
}

/// A running service over one temporary tree: `drop/`, `out/`, a configuration
/// file; stopped when the test ends.
final class ServiceHarness {
    let temp: TemporaryFolder
    let drop: String
    let out: String
    let recorder = Recorder()
    /// Released first when the harness goes, before the folders are removed.
    private(set) var service: HotFolderService!
    var done: String { drop + "/done" }
    var failed: String { drop + "/failed" }

    /// `folderLines` are extra lines for `[folder test]`; the drop folder is
    /// `drop`, the export folder `out`, unless the lines say otherwise.
    init(_ folderLines: String = "", settle: String = "0", workers: Int = 2, workerExecutable: String? = nil,
         before: (ServiceHarness.Paths) throws -> Void = { _ in }) throws {
        temp = TemporaryFolder("hf-service")
        drop = temp.sub("drop")
        out = temp.path + "/out"
        try before(Paths(root: temp.path, drop: drop, out: out))
        var lines = "[service]\nworkers = \(workers)\nlog-level = debug\ninstance = \(testInstance)\n\n[folder test]\npath = drop\nsettle = \(settle)\n"
        if !folderLines.contains("export.to") { lines += "export.to = out\n" }
        lines += folderLines
        let config = try configuration(lines, in: temp)
        service = HotFolderService(configuration: config, delegate: recorder, logToStandardError: false, workerExecutable: workerExecutable)
    }

    struct Paths {
        let root: String
        let drop: String
        let out: String
    }

    func start() { service.start() }

    /// Stops the service and lets queued jobs end before the folders go away.
    func stop() {
        guard let service else { return }
        service.stop()
        let deadline = Date().addingTimeInterval(30)
        while service.pendingJobs > 0 && Date() < deadline { usleep(10_000) }
    }

    deinit {
        stop()
        service = nil
    }

    /// Waits until `count` jobs have ended (successfully or not).
    func waitForOutcomes(_ count: Int, timeout: Double = 60, file: StaticString = #filePath, line: UInt = #line) {
        waitUntil(timeout: timeout, "\(count) finished jobs (have \(recorder.outcomes.count))", file: file, line: line) {
            recorder.outcomes.count >= count
        }
    }

    /// Waits until the drop folder is quiet: nothing waiting, nothing claimed.
    func waitUntilIdle(timeout: Double = 60, file: StaticString = #filePath, line: UInt = #line) {
        waitUntil(timeout: timeout, "an idle service", file: file, line: line) {
            service.pendingJobs == 0 && jobFolders(of: drop).isEmpty
        }
    }

    func errorText(for name: String) -> String { readText(failed + "/" + name + ".error.txt") }
}

// MARK: - processes

struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

func runProcess(_ executable: String, _ arguments: [String], currentDirectory: String? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read before waiting: a full pipe would block the child.
    let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
    let stderrData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus,
                         stdout: String(decoding: stdoutData, as: UTF8.self),
                         stderr: String(decoding: stderrData, as: UTF8.self))
}

/// The `hotfolder` executable built next to the test bundle.
enum HotfolderExecutable {
    static var path: String? {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for directory in candidates {
            for sub in ["", ".."] {
                let path = directory.appendingPathComponent(sub).appendingPathComponent("hotfolder").standardizedFileURL.path
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: path) {
                    return path
                }
            }
        }
        return nil
    }

    static func require() throws -> String {
        guard let path else { throw XCTSkip("the hotfolder executable is not built next to the tests (\(Bundle.main.bundleURL.path))") }
        return path
    }
}

/// qpdf's command-line tool, when installed (used to check the test PDFs).
var qpdfTool: String? {
    ["/usr/bin/qpdf", "/usr/local/bin/qpdf"].first { FileManager.default.isExecutableFile(atPath: $0) }
}

// MARK: - pipeline

/// One run of the generation pipeline on a claimed copy of `input`.
final class PipelineRun {
    let temp: TemporaryFolder
    let folder: FolderConfiguration
    let job: JobFolder
    let outcome: Result<PipelineResult, JobFailure>

    init(_ input: [UInt8], name: String = "doc.pdf", folderLines: String = "") throws {
        temp = TemporaryFolder("hf-pipeline")
        let drop = temp.sub("drop")
        let config = try configuration("[folder test]\npath = drop\nexport.to = out\n" + folderLines, in: temp)
        folder = try XCTUnwrap(config.folder(named: "test"))
        writeFile(drop + "/" + name, input)
        let area = try JobArea.open(path: instancePath(of: drop))
        guard case .claimed(let job) = try JobFolder.claim(name, from: try Directory(path: drop), relativeFolder: "", into: area) else {
            throw XCTSkip("claim of a file just written vanished")
        }
        self.job = job
        do {
            outcome = .success(try Pipeline(folder: folder, job: job).run())
        } catch {
            outcome = .failure(error)
        }
    }

    convenience init(_ pdf: TestPDF, name: String = "doc.pdf", folderLines: String = "") throws {
        try self.init(pdf.bytes, name: name, folderLines: folderLines)
    }

    func result(file: StaticString = #filePath, line: UInt = #line) throws -> PipelineResult {
        switch outcome {
        case .success(let r): return r
        case .failure(let f):
            XCTFail("the pipeline failed: \(f)", file: file, line: line)
            throw f
        }
    }

    func failure(file: StaticString = #filePath, line: UInt = #line) throws -> JobFailure {
        switch outcome {
        case .success(let r):
            XCTFail("the pipeline succeeded but should have failed: \(r)", file: file, line: line)
            throw XCTSkip("no failure")
        case .failure(let f): return f
        }
    }

    /// The path of the (first) staged output.
    func outputPath(file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try result(file: file, line: line)
        let output = try XCTUnwrap(result.outputs.first, "no output", file: file, line: line)
        return job.path(output.file)
    }

    func outputBytes(file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        readBytes(try outputPath(file: file, line: line))
    }

    func summary(file: StaticString = #filePath, line: UInt = #line) throws -> PDFSummary {
        try summarize(try outputPath(file: file, line: line))
    }

    var warnings: [String] { (try? outcome.get().warnings) ?? [] }
}

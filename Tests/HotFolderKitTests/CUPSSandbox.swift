import Foundation
import XCTest

struct CUPSSandboxError: Error, CustomStringConvertible {
    let description: String
}

/// A private cupsd started by scripts/cups-sandbox in a fresh temporary directory.
final class CUPSSandbox {
    let dir: String
    let server: String

    /// scripts/cups-sandbox of this package (HOTFOLDER_CUPS_SANDBOX overrides).
    static var script: String {
        if let path = ProcessInfo.processInfo.environment["HOTFOLDER_CUPS_SANDBOX"], !path.isEmpty {
            return path
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // HotFolderKitTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
            .appendingPathComponent("scripts/cups-sandbox").path
    }

    init(queues: [String]) throws {
        // Short path: the socket path must fit in sockaddr_un.
        var template = Array("/tmp/hf-cups.XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        guard let created else { throw CUPSSandboxError(description: "mkdtemp failed: errno \(errno)") }
        dir = created
        let output = try Self.run(Self.script, ["start", created] + queues)
        guard let last = output.split(separator: "\n").last, last.hasPrefix("CUPS_SERVER=") else {
            throw CUPSSandboxError(description: "cups-sandbox start printed no CUPS_SERVER line: \(output)")
        }
        server = String(last.dropFirst("CUPS_SERVER=".count))
    }

    deinit {
        _ = try? Self.run(Self.script, ["stop", dir])
        try? FileManager.default.removeItem(atPath: dir)
    }

    func start(_ queues: [String] = []) throws {
        _ = try Self.run(Self.script, ["start", dir] + queues)
    }

    func stop() throws {
        _ = try Self.run(Self.script, ["stop", dir])
    }

    /// SIGKILL, as if cupsd crashed: its socket file stays behind.
    func kill9() throws {
        let pidText = try String(contentsOfFile: dir + "/run/cupsd.pid", encoding: .utf8)
        guard let pid = Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CUPSSandboxError(description: "bad pid file: \(pidText)")
        }
        guard kill(pid, SIGKILL) == 0 else { throw CUPSSandboxError(description: "kill \(pid): errno \(errno)") }
        // Dead means gone or a zombie (whoever adopted it may reap it late).
        try pollFor("cupsd \(pid) to die") { () -> Bool? in
            guard kill(pid, 0) == 0,
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.range(of: ") ", options: .backwards) else { return true }
            return stat[close.upperBound...].hasPrefix("Z") ? true : nil
        }
    }

    func addQueue(_ name: String, _ mode: [String] = []) throws {
        _ = try Self.run(Self.script, ["add-queue", dir, name] + mode)
    }

    /// Runs a CUPS command-line tool (cupsdisable, cupsreject, lpadmin...) against this cupsd.
    func tool(_ name: String, _ arguments: [String]) throws {
        _ = try Self.run("/usr/bin/env", [name, "-h", server] + arguments)
    }

    /// The capture of a job: document bytes and metadata, once the backend wrote them.
    func capture(queue: String, job: Int32) -> (document: Data, metadata: [String: Any])? {
        let base = "\(dir)/printed/\(queue)/\(job)"
        guard let json = FileManager.default.contents(atPath: base + ".json"),
              let document = FileManager.default.contents(atPath: base + ".pdf"),
              let object = try? JSONSerialization.jsonObject(with: json),
              let metadata = object as? [String: Any] else { return nil }
        return (document, metadata)
    }

    /// Writes `data` to a file in the sandbox and returns its path.
    func file(_ name: String, _ data: Data) throws -> String {
        let path = "\(dir)/\(name)"
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Runs a program; returns its stdout, throws with its stderr on failure.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = (environment["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        process.environment = environment
        let stdout = Pipe()
        let stderrPath = NSTemporaryDirectory() + "hf-cups-stderr-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil),
              let stderr = FileHandle(forWritingAtPath: stderrPath) else {
            throw CUPSSandboxError(description: "cannot create \(stderrPath)")
        }
        defer {
            try? stderr.close()
            try? FileManager.default.removeItem(atPath: stderrPath)
        }
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: output, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            let errors = FileManager.default.contents(atPath: stderrPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
            throw CUPSSandboxError(
                description: "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(errors)\(text)"
            )
        }
        return text
    }
}

/// Polls `probe` until it returns a value, failing after `timeout` seconds.
/// The short pause between probes is the polling interval, not a synchronisation.
@discardableResult
func pollFor<T>(_ what: String, timeout: TimeInterval = 20, _ probe: () throws -> T?) throws -> T {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let value = try probe() { return value }
        if Date() >= deadline {
            throw CUPSSandboxError(description: "timed out after \(timeout)s waiting for \(what)")
        }
        Thread.sleep(forTimeInterval: 0.02)
    }
}

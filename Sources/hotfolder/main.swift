import Foundation
import Glibc
import HotFolderKit

// sysexits(3)
let exitUsage: Int32 = 64
let exitConfig: Int32 = 78
let exitSoftware: Int32 = 70

let usage = """
usage: hotfolder run     --config FILE
       hotfolder check   --config FILE
       hotfolder process --config FILE --folder NAME FILE...
       hotfolder status  --config FILE
       hotfolder journal --config FILE [--folder NAME] [JOB]

  run      watch the configured drop folders (foreground; SIGTERM or Ctrl-C stops)
  check    validate the configuration and print every folder's resolved settings
  process  run the pipeline once on the given files, without watching
  status   show each folder's waiting, running and failed documents
  journal  print the journal of each drop folder, one line per step of a job
           (or of the one JOB id given, as the log and the .error.txt files name it)

"""

func fail(_ message: String, _ code: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(code)
}

struct Arguments {
    var command = ""
    var config: String?
    var folder: String?
    var files: [String] = []

    init(_ argv: [String]) {
        var rest = argv.dropFirst()
        guard let first = rest.first else { fail(usage, exitUsage) }
        if ["--help", "-h", "help"].contains(first) {
            print(usage)
            exit(0)
        }
        command = first
        rest = rest.dropFirst()
        while let arg = rest.first {
            rest = rest.dropFirst()
            switch arg {
            case "--config", "-c":
                guard let v = rest.first else { fail("--config needs a file\n\n" + usage, exitUsage) }
                config = v
                rest = rest.dropFirst()
            case "--folder", "-f":
                guard let v = rest.first else { fail("--folder needs a name\n\n" + usage, exitUsage) }
                folder = v
                rest = rest.dropFirst()
            case "--help", "-h":
                print(usage)
                exit(0)
            case "--":
                files += rest
                rest = []
            default:
                if arg.hasPrefix("-") && arg.count > 1 { fail("unknown option \(arg)\n\n" + usage, exitUsage) }
                files.append(arg)
            }
        }
    }
}

func loadConfiguration(_ path: String?) -> ServiceConfiguration {
    guard let path else { fail("--config FILE is required\n\n" + usage, exitUsage) }
    do {
        return try ServiceConfiguration.load(file: path)
    } catch {
        fail(error.description, exitConfig)
    }
}

/// Applies the umask and drops root before any folder is touched.
func enterServiceIdentity(_ config: ServiceConfiguration) -> String? {
    umask(mode_t(config.umask))
    do {
        return try Privileges.drop(to: config.user)
    } catch {
        fail("cannot switch to user \(config.user ?? ""): \(error)", 77) // EX_NOPERM
    }
}

/// This binary, for starting worker processes.
func ownExecutable() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return nil }
    return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

// Worker mode: generation requests on stdin, answers on stdout (internal).
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "worker" {
    var memoryLimit: Int?
    if let i = CommandLine.arguments.firstIndex(of: "--memory-limit"), i + 1 < CommandLine.arguments.count {
        memoryLimit = Int(CommandLine.arguments[i + 1])
    }
    exit(WorkerMain.run(memoryLimit: memoryLimit))
}

let arguments = Arguments(CommandLine.arguments)
switch arguments.command {
case "check":
    let config = loadConfiguration(arguments.config)
    print(config.resolvedDescription)
    print("\n# configuration OK: \(config.folders.count) folder\(config.folders.count == 1 ? "" : "s")")
case "run":
    // At once: a reload signal (systemd's ExecReload) that arrives while the
    // configuration is still being read must not end the service (SIGHUP's
    // default action); the handler below takes over once the service exists.
    signal(SIGHUP, SIG_IGN)
    let config = loadConfiguration(arguments.config)
    let warning = enterServiceIdentity(config)
    let service = HotFolderService(configuration: config, workerExecutable: ownExecutable())
    if let warning { service.note(.warning, warning) }
    signal(SIGTERM, SIG_IGN)
    signal(SIGINT, SIG_IGN)
    signal(SIGPIPE, SIG_IGN)
    signal(SIGHUP, SIG_IGN)
    var sources: [DispatchSourceSignal] = []
    for sig in [SIGTERM, SIGINT] {
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler { service.stop() }
        source.resume()
        sources.append(source)
    }
    // SIGHUP: reload; a configuration with problems is logged and the old one stays.
    let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
    hangup.setEventHandler {
        do {
            service.reload(try ServiceConfiguration.load(file: config.file))
        } catch {
            service.note(.error, "configuration NOT reloaded, the running one stays:\n\(error)")
        }
    }
    hangup.resume()
    sources.append(hangup)
    service.run()
    withExtendedLifetime(sources) {}
    exit(0)
case "process":
    let config = loadConfiguration(arguments.config)
    guard let folder = arguments.folder else { fail("process needs --folder NAME\n\n" + usage, exitUsage) }
    guard !arguments.files.isEmpty else { fail("process needs at least one FILE\n\n" + usage, exitUsage) }
    _ = enterServiceIdentity(config)
    let service = HotFolderService(configuration: config, workerExecutable: ownExecutable())
    var failures = 0
    let named = Set(arguments.files)
    for file in arguments.files {
        // A ticket named together with its document went with it.
        if file.hasSuffix(JobTicket.suffix), named.contains(String(file.dropLast(JobTicket.suffix.count))) {
            print("SKIPPED \(file): a job ticket, taken with its document")
            continue
        }
        do {
            let outcome = try service.process(file: file, folder: folder)
            if let failure = outcome.failure {
                failures += 1
                print("FAILED \(file): \(failure.description)\n  what to do: \(failure.remedy)" + (outcome.originalNow.map { "\n  original: \($0)" } ?? ""))
            } else {
                print("OK \(file) → " + outcome.delivered.joined(separator: ", "))
            }
        } catch {
            failures += 1
            print("FAILED \(file): \(error.description)")
        }
    }
    exit(failures == 0 ? 0 : 1)
case "status":
    let config = loadConfiguration(arguments.config)
    print(FolderStatus.report(for: config))
case "journal":
    let config = loadConfiguration(arguments.config)
    guard arguments.files.count <= 1 else { fail("journal takes at most one JOB id\n\n" + usage, exitUsage) }
    if let folder = arguments.folder, config.folder(named: folder) == nil { fail("no folder named \(folder) in \(config.file)", exitUsage) }
    print(JournalReport.report(for: config, folder: arguments.folder, job: arguments.files.first))
default:
    fail("unknown command \(arguments.command)\n\n" + usage, exitUsage)
}

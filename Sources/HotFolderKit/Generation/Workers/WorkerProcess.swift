import CSystem
import Foundation
import Glibc

/// One long-lived `hotfolder worker` process and its two pipes.
final class WorkerProcess: @unchecked Sendable {
    let pid: pid_t
    private let requests: Int32   // our end of the worker's stdin
    private let responses: Int32  // our end of the worker's stdout
    private var exited = false
    /// The folder configuration this worker was sent last (it keeps it for
    /// the next documents). Used only by the job that holds the worker.
    var folder: FolderConfiguration?

    init(executable: String, memoryLimit: Int?) throws(SystemError) {
        var toWorker: [Int32] = [-1, -1]
        var fromWorker: [Int32] = [-1, -1]
        guard hf_pipe_cloexec(&toWorker) == 0 else { throw SystemError("pipe", path: executable) }
        guard hf_pipe_cloexec(&fromWorker) == 0 else {
            close(toWorker[0]); close(toWorker[1])
            throw SystemError("pipe", path: executable)
        }
        var arguments = [executable, "worker"]
        if let memoryLimit { arguments += ["--memory-limit", String(memoryLimit)] }
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArguments.append(nil)
        defer { for p in cArguments { free(p) } }
        var child: pid_t = 0
        let rc = cArguments.withUnsafeMutableBufferPointer { buffer in
            hf_spawn(executable, buffer.baseAddress, toWorker[0], fromWorker[1], &child)
        }
        close(toWorker[0])
        close(fromWorker[1])
        guard rc == 0 else {
            close(toWorker[1]); close(fromWorker[0])
            throw SystemError("start worker", path: executable, errno: rc)
        }
        pid = child
        requests = toWorker[1]
        responses = fromWorker[0]
    }

    deinit {
        close(requests)
        close(responses)
        if !exited {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }

    enum Outcome {
        case answered(GenerationResponse)
        /// The worker died; a description of how (signal or exit status).
        case died(signal: Int32?, status: Int32?)
        case timedOut
        case broken(String)
    }

    func generate(_ request: GenerationRequest, timeout: Double) -> Outcome {
        guard Frame.write(request, to: requests) else { return reap() }
        switch Frame.read(GenerationResponse.self, from: responses, deadline: Date().addingTimeInterval(timeout)) {
        case .value(let response): return .answered(response)
        case .endOfFile: return reap()
        case .timedOut:
            kill(pid, SIGKILL)
            _ = reap()
            return .timedOut
        case .broken(let message):
            kill(pid, SIGKILL)
            _ = reap()
            return .broken(message)
        }
    }

    private func reap() -> Outcome {
        var status: Int32 = 0
        var r: pid_t
        repeat { r = waitpid(pid, &status, 0) } while r < 0 && errno == EINTR
        exited = true
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import.
        let signal = status & 0x7F
        if signal != 0 && signal != 0x7F { return .died(signal: signal, status: nil) }
        return .died(signal: nil, status: (status >> 8) & 0xFF)
    }
}

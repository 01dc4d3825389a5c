package host

// The helpers of the package's own tests, for its external tests.
const TestDeadline = deadline

type LogBuf = logBuf

var (
	WaitFor   = waitFor
	NewLog    = newLog
	ReplayDir = replayDir
)

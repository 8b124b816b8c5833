package inventory

// RaceEnabled tells the external tests that the race detector is on (it
// disables sync.Pool reuse, so allocation counts mean little).
const RaceEnabled = raceEnabled

//go:build unix

package fdlimit

import "syscall"

func raise(need uint64) (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	if uint64(rl.Cur) >= need {
		return uint64(rl.Cur), true
	}
	want := rl
	want.Cur = min(need, uint64(rl.Max))
	if want.Cur > rl.Cur {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err == nil {
			rl = want
		}
	}
	return uint64(rl.Cur), true
}

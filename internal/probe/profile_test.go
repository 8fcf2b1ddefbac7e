package probe

import (
	"testing"
	"time"
)

func TestParseTimer(t *testing.T) {
	tests := []struct {
		name string
		want Timer
		ok   bool
	}{
		{"profile-97", Timer{Interval: time.Second / 97}, true},
		{"profile-1", Timer{Interval: time.Second}, true},
		{"profile-100hz", Timer{Interval: 10 * time.Millisecond}, true},
		{"profile-100HZ", Timer{Interval: 10 * time.Millisecond}, true},
		{"profile-5000", Timer{Interval: 200 * time.Microsecond}, true},
		{"profile-5001", Timer{}, false}, // 199960 ns: under 200 µs
		{"profile-200us", Timer{Interval: 200 * time.Microsecond}, true},
		{"profile-200usec", Timer{Interval: 200 * time.Microsecond}, true},
		{"profile-199us", Timer{}, false},
		{"profile-2000000000ns", Timer{Interval: 2 * time.Second}, true},
		{"profile-2000000000nsec", Timer{Interval: 2 * time.Second}, true},
		{"profile-1ms", Timer{Interval: time.Millisecond}, true},
		{"profile-1msec", Timer{Interval: time.Millisecond}, true},
		{"profile-1s", Timer{Interval: time.Second}, true},
		{"profile-1sec", Timer{Interval: time.Second}, true},
		{"tick-1sec", Timer{Tick: true, Interval: time.Second}, true},
		{"tick-1Sec", Timer{Tick: true, Interval: time.Second}, true},
		{"tick-2m", Timer{Tick: true, Interval: 2 * time.Minute}, true},
		{"tick-1min", Timer{Tick: true, Interval: time.Minute}, true},
		{"tick-1h", Timer{Tick: true, Interval: time.Hour}, true},
		{"tick-1hour", Timer{Tick: true, Interval: time.Hour}, true},
		{"tick-1d", Timer{Tick: true, Interval: 24 * time.Hour}, true},
		{"tick-1day", Timer{Tick: true, Interval: 24 * time.Hour}, true},
		{"tick-20000000ns", Timer{Tick: true, Interval: 20 * time.Millisecond}, true},
		{"tick-2000us", Timer{Tick: true, Interval: 2 * time.Millisecond}, true},
		{"tick-007", Timer{Tick: true, Interval: time.Second / 7}, true},
		{"tick-1ns", Timer{}, false},
		{"profile-1ns", Timer{}, false},
		{"profile-1nsec", Timer{}, false},
		{"profile-1us", Timer{}, false},
		{"profile-1usec", Timer{}, false},
		{"profile-n", Timer{}, false},
		{"tick-n", Timer{}, false},
		{"profile-", Timer{}, false},
		{"profile-0", Timer{}, false},
		{"profile-0s", Timer{}, false},
		{"profile-1x", Timer{}, false},
		{"profile-1x2s", Timer{}, false},
		{"profile-+1", Timer{}, false},
		{"profile-1 s", Timer{}, false},
		{"profile-99999999999999999999999", Timer{}, false}, // overflows hrtime_t
		{"profile-9999999999d", Timer{}, false},             // so does its interval
		{"tick-*", Timer{}, false},
		{"tick-1?", Timer{}, false},
		{"tick", Timer{}, false},
		{"BEGIN", Timer{}, false},
		{"Profile-1", Timer{}, false}, // the prefix is case-sensitive
	}
	for _, tt := range tests {
		got, ok := parseTimer(tt.name)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseTimer(%q) = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

# tracewakes.awk reads `go tool trace -d=parsed FILE` of a `kvshare bench
# --trace FILE` run and prints, for each kind of latency sample (a
# region such as "node fetch 256"), how many samples there were, the
# median number of goroutine wake-ups inside one (Waiting or new to
# Runnable: the sample's hand-offs) and the median time those woken
# goroutines then waited for a core, summed over them, in µs:
#
#	go tool trace -d=parsed FILE | awk -f tools/tracewakes.awk | sort
$4 == "RegionBegin" {
	match($0, /Type="[^"]*"/)
	r = substr($0, RSTART + 6, RLENGTH - 7)
	if (r != "") { cur = r; w = 0; d = 0; delete ready }
	next
}
$4 == "RegionEnd" && cur != "" {
	n[cur]++; W[cur, n[cur]] = w; D[cur, n[cur]] = d / 1000; cur = ""
	next
}
cur != "" && $4 == "StateTransition" && match($0, /GoID=[0-9]+ [A-Za-z]+->[A-Za-z]+/) {
	split(substr($0, RSTART + 5, RLENGTH - 5), a, " ")
	t = substr($5, 6)
	if (a[2] == "Waiting->Runnable" || a[2] == "NotExist->Runnable") { w++; ready[a[1]] = t }
	else if (a[2] == "Runnable->Running" && (a[1] in ready)) { d += t - ready[a[1]]; delete ready[a[1]] }
}
function median(arr, k, m,    i, j, v, x) {
	for (i = 1; i <= m; i++) v[i] = arr[k, i]
	for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
	for (k in n) printf "%-26s %4d samples  wake-ups %4.1f  waited for a core %9.1f µs\n", k, n[k], median(W, k, n[k]), median(D, k, n[k])
}

package report

// CountTicks is countTicks for the tests.
var CountTicks = countTicks{}.Ticks

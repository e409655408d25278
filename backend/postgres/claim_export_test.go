package postgres

// The claim's statements, for the plan check in the external tests.
const (
	ClaimSQL    = claimSQL
	PickPlanSQL = pickPlanSQL
)

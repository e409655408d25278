package postgres

// Schema pieces for the external tests that build an old database by hand.
var (
	MigrationsForTest        = migrations
	CreateSchemaTableForTest = createSchemaTable
)

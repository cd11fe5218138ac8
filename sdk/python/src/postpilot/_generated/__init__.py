"""What scripts/generate-sdks.ts writes from the API's OpenAPI document: ``models`` (the schemas as
TypedDicts) and ``operations`` (the resources, one method per operation)."""

package qdrantserver

import (
	"context"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// TestHealthCheck connects with the client's compatibility check on.
func TestHealthCheck(t *testing.T) {
	host, port := Start(t)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := must(c.HealthCheck(context.Background()))(t)
	if r.GetVersion() != Version || !qdrant.IsCompatible("v1.17.1", r.GetVersion()) {
		t.Fatalf("version %q", r.GetVersion())
	}
}

func TestCollections(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "b")
	plainCollection(t, c, "a")
	// Qdrant: StorageError::AlreadyExists "Collection `a` already exists!", gRPC AlreadyExists.
	err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "a",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})})
	wantCode(t, err, codes.AlreadyExists)
	if names := must(c.ListCollections(ctx))(t); !sameStrings(names, []string{"a", "b"}) {
		t.Fatalf("collections %v", names)
	}
	if !must(c.CollectionExists(ctx, "a"))(t) || must(c.CollectionExists(ctx, "zz"))(t) {
		t.Fatal("CollectionExists")
	}
	upsert(t, c, "a", &qdrant.PointStruct{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0)})
	info := must(c.GetCollectionInfo(ctx, "a"))(t)
	if info.GetStatus() != qdrant.CollectionStatus_Green || info.GetPointsCount() != 1 ||
		info.GetConfig().GetParams().GetVectorsConfig().GetParams().GetSize() != 2 {
		t.Fatalf("info %v", info)
	}
	// Qdrant: StorageError::NotFound "Collection `zz` doesn't exist!", gRPC NotFound.
	_, err = c.GetCollectionInfo(ctx, "zz")
	wantCode(t, err, codes.NotFound)
	_, err = c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "zz", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0)}}})
	wantCode(t, err, codes.NotFound)
	_, err = c.Count(ctx, &qdrant.CountPoints{CollectionName: "zz"})
	wantCode(t, err, codes.NotFound)
	if err := c.DeleteCollection(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	// Deleting a missing collection answers result false, which the client reports as an error.
	if err := c.DeleteCollection(ctx, "a"); err == nil {
		t.Fatal("deleting a missing collection succeeded")
	}
	if names := must(c.ListCollections(ctx))(t); !sameStrings(names, []string{"b"}) {
		t.Fatalf("collections %v", names)
	}
}

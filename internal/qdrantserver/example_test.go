package qdrantserver_test

import (
	"context"
	"fmt"
	"net"

	"github.com/agentmem/memory/internal/qdrantserver"
	"github.com/qdrant/go-client/qdrant"
)

// Start a server, create a collection, upsert points and query them with
// the official client.
func Example() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := qdrantserver.New()
	go s.Serve(l)
	defer s.Stop()

	addr := l.Addr().(*net.TCPAddr)
	client, err := qdrant.NewClient(&qdrant.Config{Host: "127.0.0.1", Port: addr.Port, SkipCompatibilityCheck: true})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx := context.Background()

	err = client.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: "notes",
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot}),
	})
	if err != nil {
		panic(err)
	}
	_, err = client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "notes", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(map[string]any{"user": "ann"})},
		{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(0.5, 0.5), Payload: qdrant.NewValueMap(map[string]any{"user": "bob"})},
		{Id: qdrant.NewIDNum(3), Vectors: qdrant.NewVectors(0, 1), Payload: qdrant.NewValueMap(map[string]any{"user": "ann"})},
	}})
	if err != nil {
		panic(err)
	}
	hits, err := client.Query(ctx, &qdrant.QueryPoints{
		CollectionName: "notes",
		Query:          qdrant.NewQuery(1, 0.2),
		Filter:         &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("user", "ann")}},
		WithPayload:    qdrant.NewWithPayload(true),
	})
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%d %s %.1f\n", h.GetId().GetNum(), h.GetPayload()["user"].GetStringValue(), h.GetScore())
	}
	// Output:
	// 1 ann 1.0
	// 3 ann 0.2
}

-- CreateTable
CREATE TABLE "ProfileRunSeq" (
    "nodeId" TEXT NOT NULL,
    "provisionState" TEXT NOT NULL,
    "last" INTEGER NOT NULL,

    PRIMARY KEY ("nodeId", "provisionState")
);


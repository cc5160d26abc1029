-- CreateTable
CREATE TABLE "ProfileRunSeq" (
    "nodeId" TEXT NOT NULL,
    "provisionState" TEXT NOT NULL,
    "last" INTEGER NOT NULL,

    CONSTRAINT "ProfileRunSeq_pkey" PRIMARY KEY ("nodeId","provisionState")
);


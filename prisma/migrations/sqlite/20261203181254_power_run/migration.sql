-- AlterTable
ALTER TABLE "Node" ADD COLUMN "powerRequestedAt" DATETIME;
ALTER TABLE "Node" ADD COLUMN "powerWorkflowId" TEXT;


-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "powerRequestedAt" TIMESTAMP(3),
ADD COLUMN     "powerWorkflowId" TEXT;


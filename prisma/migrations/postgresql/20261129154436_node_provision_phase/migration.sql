-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "provisionPhase" TEXT;

